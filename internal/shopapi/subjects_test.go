package shopapi_test

import (
	"reflect"
	"strings"
	"testing"

	"github.com/slotrecovery/slotrecovery/api"
	"github.com/slotrecovery/slotrecovery/internal/jobs"
)

// TestStoredObjectsAreTagged: every object stored as JSON (the data of webhook events,
// stored rendered with the api package's types and sent later, and River's job
// arguments, read back) names each field by a json tag, down to its nested structs, so
// that renaming a Go field cannot change, or lose, what is already stored.
func TestStoredObjectsAreTagged(t *testing.T) {
	t.Parallel()
	for _, v := range []any{
		api.Opening{}, api.Customer{}, api.MessageReceived{}, api.SMSSenderUpdated{},
		jobs.Wave{}, jobs.Text{}, jobs.Refund{}, jobs.WebhookDelivery{},
	} {
		for _, missing := range untagged(reflect.TypeOf(v), map[reflect.Type]bool{}) {
			t.Errorf("%T: %s has no json tag", v, missing)
		}
	}
}

// untagged lists the exported fields of struct type typ, and of the structs of ours it
// holds, that have no json tag.
func untagged(typ reflect.Type, seen map[reflect.Type]bool) []string {
	for typ.Kind() == reflect.Pointer || typ.Kind() == reflect.Slice || typ.Kind() == reflect.Map {
		typ = typ.Elem()
	}
	if typ.Kind() != reflect.Struct || seen[typ] || !strings.HasPrefix(typ.PkgPath(), "github.com/slotrecovery/") {
		return nil
	}
	seen[typ] = true
	var out []string
	for i := range typ.NumField() {
		f := typ.Field(i)
		if !f.IsExported() {
			continue
		}
		if _, ok := f.Tag.Lookup("json"); !ok {
			out = append(out, typ.Name()+"."+f.Name)
		}
		out = append(out, untagged(f.Type, seen)...)
	}
	return out
}
