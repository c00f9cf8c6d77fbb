package chattemplate

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/kvref/kvref/internal/testutil"
)

// fixtureTime is the time the fixtures were rendered at (their README).
var fixtureTime = time.Date(2024, 7, 26, 0, 0, 0, 0, time.UTC)

// fixture is one line of ../shared/chat-templates/renders.jsonl: a conversation rendered by
// Hugging Face's JavaScript Jinja (@huggingface/jinja 0.5.11), cross-checked with Python
// Jinja2 configured as transformers configures it.
type fixture struct {
	Family              string                     `json:"family"`
	Conversation        string                     `json:"conversation_id"`
	Messages            json.RawMessage            `json:"messages"`
	AddGenerationPrompt bool                       `json:"add_generation_prompt"`
	BOS                 *string                    `json:"bos_token"`
	EOS                 *string                    `json:"eos_token"`
	Extra               map[string]json.RawMessage `json:"extra"`
	Rendered            *string                    `json:"rendered"`
	Error               *string                    `json:"error"`
}

// loadFixtures reads renders.jsonl, skipping the test when ../shared is absent.
func loadFixtures(t *testing.T) (string, []fixture) {
	t.Helper()
	dir := testutil.Shared(t, "chat-templates")
	f, err := os.Open(filepath.Join(dir, "renders.jsonl"))
	require.NoError(t, err)
	defer f.Close()
	var out []fixture
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var fx fixture
		require.NoError(t, json.Unmarshal(sc.Bytes(), &fx))
		out = append(out, fx)
	}
	require.NoError(t, sc.Err())
	require.NotEmpty(t, out)
	return dir, out
}

// context builds the render context of a fixture, as its README describes it.
func (fx *fixture) context(t *testing.T) Context {
	t.Helper()
	msgs, err := DecodeJSON(fx.Messages)
	require.NoError(t, err)
	c := Context{Messages: msgs.([]any), AddGenerationPrompt: fx.AddGenerationPrompt, Now: fixtureTime, Vars: map[string]any{}}
	if fx.BOS != nil {
		c.BOSToken = *fx.BOS
	}
	if fx.EOS != nil {
		c.EOSToken = *fx.EOS
	}
	for k, raw := range fx.Extra {
		v, err := DecodeJSON(raw)
		require.NoError(t, err)
		c.Vars[k] = v
	}
	return c
}

// TestFixtureRenders renders every conversation of ../shared/chat-templates/renders.jsonl
// with its family's tokenizer_config.json and requires the same bytes, or an error carrying
// the template's own message where Hugging Face's renderer raised one.
func TestFixtureRenders(t *testing.T) {
	t.Parallel()

	dir, fixtures := loadFixtures(t)
	templates := map[string]*Template{}
	passed, errorsExpected := 0, 0
	families := map[string]int{}
	for _, fx := range fixtures {
		tmpl, ok := templates[fx.Family]
		if !ok {
			tc, err := ReadTokenizerConfig(filepath.Join(dir, fx.Family, "tokenizer_config.json"))
			require.NoError(t, err, fx.Family)
			tmpl, err = tc.Templates.Template(fx.Family, "")
			require.NoError(t, err, fx.Family)
			templates[fx.Family] = tmpl
		}
		name := fx.Family + "/" + fx.Conversation
		if fx.AddGenerationPrompt {
			name += "+gen"
		}
		got, err := tmpl.Render(fx.context(t))
		if fx.Error != nil {
			errorsExpected++
			var raised *RaiseError
			require.ErrorAsf(t, err, &raised, "%s: want the template's error %q, got %q", name, *fx.Error, got)
			require.Equalf(t, strings.TrimPrefix(*fx.Error, "Error: "), raised.Message, "%s: raised message", name)
		} else {
			require.NoErrorf(t, err, "%s", name)
			if got != *fx.Rendered {
				i := 0
				for i < len(got) && i < len(*fx.Rendered) && got[i] == (*fx.Rendered)[i] {
					i++
				}
				require.FailNow(t, fmt.Sprintf("%s: renders differ from byte %d:\n got %q\nwant %q", name, i, tail(got, i), tail(*fx.Rendered, i)))
			}
		}
		passed++
		families[fx.Family]++
	}
	t.Logf("%d of %d fixtures match (%d of them expected errors), over %d families: %v", passed, len(fixtures), errorsExpected, len(families), families)
	require.Equal(t, len(fixtures), passed)
	require.Len(t, families, 7)
}

func tail(s string, i int) string {
	s = s[max(0, i-20):]
	if len(s) > 200 {
		s = s[:200] + "..."
	}
	return s
}
