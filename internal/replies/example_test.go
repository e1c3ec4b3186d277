package replies_test

import (
	"fmt"

	"github.com/slotrecovery/slotrecovery/internal/replies"
)

func ExampleRead() {
	for _, body := range []string{
		"Yes please! 👍",
		"yes but can it be 4pm?",
		"Nope, busy",
		"stop texting me, yes",
		"I can't stop by today",
		`Liked “A 3pm slot just opened today. Reply YES to book it.”`,
		"cancel my 3pm appointment",
	} {
		fmt.Printf("%s → %s\n", body, replies.Read(body, "").Intent)
	}
	// Output:
	// Yes please! 👍 → yes
	// yes but can it be 4pm? → clarify
	// Nope, busy → no
	// stop texting me, yes → optout
	// I can't stop by today → no
	// Liked “A 3pm slot just opened today. Reply YES to book it.” → clarify
	// cancel my 3pm appointment → cancel_request
}

func ExampleLanguages_Only() {
	for _, body := range []string{"Sí", "no gracias", "oui", "no", "ok"} {
		r := replies.Read(body, "")
		if tag, ok := r.Languages.Only(); ok {
			fmt.Printf("%s: writes %s\n", body, tag)
		} else {
			fmt.Printf("%s: could be %s\n", body, r.Languages)
		}
	}
	// Output:
	// Sí: writes es
	// no gracias: writes es
	// oui: writes fr
	// no: could be en+es
	// ok: could be en+es+fr
}
