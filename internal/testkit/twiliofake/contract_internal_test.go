package twiliofake

import (
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"
)

// TestWithoutProseKeepsTheContract loads each document whole, as kin-openapi's loader
// reads it, and checks that it is the document the fake holds requests to once its
// prose is dropped: dropping descriptions, summaries, examples and x-twilio notes
// takes nothing else (a property named "description" stays).
func TestWithoutProseKeepsTheContract(t *testing.T) {
	t.Parallel()
	c, err := LoadContract()
	require.NoError(t, err)
	for i, name := range documentNames {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b, err := documents.ReadFile("testdata/twilio-oai/" + name)
			require.NoError(t, err)
			whole, err := openapi3.NewLoader().LoadFromData(b)
			require.NoError(t, err)
			whole.Servers = openapi3.Servers{{URL: "/"}}
			for _, item := range whole.Paths.Map() {
				item.Servers = nil
				for _, op := range item.Operations() {
					op.Servers = nil
				}
			}
			require.Equal(t, generic(t, whole), generic(t, c.docs[i].doc))
		})
	}
}

// generic is doc as kin-openapi writes it, read back as plain JSON values, without its
// prose. (kin-openapi writes no empty description: those go too.)
func generic(t *testing.T, doc *openapi3.T) any {
	t.Helper()
	b, err := json.Marshal(doc)
	require.NoError(t, err)
	var v any
	require.NoError(t, json.Unmarshal(b, &v))
	return dropEmptyDescriptions(dropProse(v, false))
}

func dropEmptyDescriptions(v any) any {
	switch v := v.(type) {
	case map[string]any:
		for k, e := range v {
			if k == "description" && e == "" {
				delete(v, k)
				continue
			}
			v[k] = dropEmptyDescriptions(e)
		}
	case []any:
		for i, e := range v {
			v[i] = dropEmptyDescriptions(e)
		}
	}
	return v
}
