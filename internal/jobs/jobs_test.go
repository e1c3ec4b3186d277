package jobs_test

import (
	"encoding/json"
	"testing"

	"github.com/google/uuid"

	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// TestTextsToMatchesText: the filter an erasure deletes texts' jobs by holds exactly the
// shop and the number under the keys a stored Text has them, so `args @> filter`
// matches the texts to the number and no other.
func TestTextsToMatchesText(t *testing.T) {
	shop := uuid.New()
	stored, err := json.Marshal(jobs.Text{Key: "k", ShopID: shop, From: "+15555550100", To: "+15555550111", Body: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	filter, err := jobs.TextsTo(shop, "+15555550111")
	if err != nil {
		t.Fatal(err)
	}
	var args, want map[string]any
	if err := json.Unmarshal(stored, &args); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(filter, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 {
		t.Fatalf("filter %s: want the shop and the number only", filter)
	}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("filter key %q = %v, the stored Text has %v (stored: %s)", k, v, args[k], stored)
		}
	}
}

// TestTextsAboutMatchesText: the filter an erasure finds an owner's alert by matches
// what a Text quoting the conversation stores.
func TestTextsAboutMatchesText(t *testing.T) {
	shop, conv := uuid.New(), uuid.New()
	stored, err := json.Marshal(jobs.Text{Key: "inbox_alert:1", ShopID: shop, From: "+15555550100", To: "+15555550199", Body: "Ana: hi", About: conv})
	if err != nil {
		t.Fatal(err)
	}
	filter, err := jobs.TextsAbout(shop, conv)
	if err != nil {
		t.Fatal(err)
	}
	var args, want map[string]any
	if err := json.Unmarshal(stored, &args); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(filter, &want); err != nil {
		t.Fatal(err)
	}
	if len(want) != 2 {
		t.Fatalf("filter %s: want the shop and the conversation only", filter)
	}
	for k, v := range want {
		if args[k] != v {
			t.Errorf("filter key %q = %v, the stored Text has %v (stored: %s)", k, v, args[k], stored)
		}
	}
	plain, err := json.Marshal(jobs.Text{Key: "k", ShopID: shop, To: "+15555550111"})
	if err != nil {
		t.Fatal(err)
	}
	var plainArgs map[string]any
	if err := json.Unmarshal(plain, &plainArgs); err != nil {
		t.Fatal(err)
	}
	if _, ok := plainArgs["about"]; ok {
		t.Errorf("a text about no conversation stores no about: %s", plain)
	}
}
