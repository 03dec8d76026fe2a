package detect

import (
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
)

// fakeKey returns n characters drawn from alphabet with a fixed seed: values shaped like
// credentials, built at run time so that no credential-shaped literal sits in the source.
func fakeKey(seed uint64, n int, alphabet string) string {
	r := rand.New(rand.NewPCG(seed, 1))
	var b strings.Builder
	for range n {
		b.WriteByte(alphabet[r.IntN(len(alphabet))])
	}
	return b.String()
}

const (
	alnum  = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789"
	digits = "0123456789"
)

func fakePEM() string {
	r := rand.New(rand.NewPCG(9, 9))
	raw := make([]byte, 180)
	for i := range raw {
		raw[i] = byte(r.IntN(256))
	}
	b := base64.StdEncoding.EncodeToString(raw)
	var lines []string
	for len(b) > 64 {
		lines = append(lines, b[:64])
		b = b[64:]
	}
	lines = append(lines, b)
	return "-----BEGIN OPENSSH PRIVATE KEY-----\n" + strings.Join(lines, "\n") + "\n-----END OPENSSH PRIVATE KEY-----\n"
}

func TestSecretValue(t *testing.T) {
	for _, tc := range []struct {
		text, want string // want: what secretValue names; "" = none
	}{
		{"here is the deploy key:\n" + fakePEM(), "a PEM private key"},
		{"token " + "gh" + "p_" + fakeKey(1, 36, alnum), "a GitHub token"},
		{"github" + "_pat_" + fakeKey(2, 22, alnum) + "_" + fakeKey(3, 59, alnum), "a GitHub token"},
		{"use gl" + "pat-" + fakeKey(4, 20, alnum) + " for the API", "a GitLab token"},
		{"aws_secret_access_key = " + fakeKey(5, 40, alnum+"/+"), "an AWS secret access key"},
		{`{"AWS_SECRET_ACCESS_KEY": "` + fakeKey(6, 40, alnum+"/+") + `"}`, "an AWS secret access key"},
		{"xo" + "xb-" + fakeKey(7, 12, digits) + "-" + fakeKey(8, 13, digits) + "-" + fakeKey(9, 24, alnum), "a Slack token"},
		{"STRIPE=" + "sk" + "_live_" + fakeKey(10, 32, alnum), "a Stripe secret key"},
		{"sk-" + "ant-api03-" + fakeKey(11, 93, alnum+"_-"), "an Anthropic API key"},
		{"OPENAI_API_KEY=sk-" + "proj-" + fakeKey(12, 48, alnum), "an OpenAI API key"},
		{"//registry.npmjs.org/:_authToken=" + "np" + "m_" + fakeKey(13, 36, alnum), "an npm token"},
		// placeholders and look-alikes
		{"aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", ""},
		{"export GITHUB_TOKEN=gh" + "p_" + strings.Repeat("x", 36), ""},
		{"export GITHUB_TOKEN=gh" + "p_" + "1234567890abcdef1234567890abcdef1234", ""},
		{"STRIPE_KEY=sk" + "_live_" + "yourstripesecretkeygoeshere", ""},
		{"-----BEGIN RSA PRIVATE KEY-----\n...\n-----END RSA PRIVATE KEY-----", ""},
		{"-----BEGIN PUBLIC KEY-----\n" + fakeKey(14, 64, alnum) + "\n" + fakeKey(15, 64, alnum) + "\n" + fakeKey(16, 64, alnum) + "\n" + fakeKey(17, 64, alnum) + "\n-----END PUBLIC KEY-----", ""},
		{"set GITHUB_TOKEN in the repository's secrets; never paste it into an issue", ""},
		{"the commit " + fakeKey(18, 40, "0123456789abcdef") + " fixed it", ""},
		{"sk-learn is the short name of scikit-learn", ""},
	} {
		_, got := secretValue(tc.text)
		if got != tc.want {
			t.Errorf("secretValue(%.60q) = %q, want %q", tc.text, got, tc.want)
		}
	}
}

// TestSecretValueInCalls: a credential in an outgoing call's argument asks (never denies, never
// passes silently); the same text in what a tool returns, or a call without one, has no opinion.
func TestSecretValueInCalls(t *testing.T) {
	e := NewEvaluator(Config{})
	token := "gh" + "p_" + fakeKey(21, 36, alnum)
	for _, tc := range []struct {
		name, phase, tool string
		args              map[string]any
		result            string
		want, rule        string
	}{
		{"a private key posted to a channel", "request", "post_message", map[string]any{"channel": "#general", "text": "deploy key:\n" + fakePEM()}, "", "uncertain", "secret_value"},
		{"a token in an issue's body", "request", "create_issue", map[string]any{"title": "ci broken", "body": "my token is " + token + ", it fails"}, "", "uncertain", "secret_value"},
		{"a token in a fetched URL", "request", "fetch", map[string]any{"url": "https://x.example/c?t=" + token}, "", "uncertain", "secret_value"},
		{"a token written into a file", "request", "write_file", map[string]any{"path": "notes.md", "content": "token: " + token + "\n"}, "", "uncertain", "secret_value"},
		{"a token in a command", "request", "Bash", map[string]any{"command": "curl -H 'Authorization: token " + token + "' https://x.example/"}, "", "uncertain", "secret_value"},
		{"a placeholder in docs posted", "request", "post_message", map[string]any{"channel": "#dev", "text": "set aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY in ~/.aws/credentials"}, "", "none", ""},
		{"a message with no secret", "request", "post_message", map[string]any{"channel": "#dev", "text": "the build is green again"}, "", "none", ""},
		{"a token in a tool's answer", "response", "read_file", map[string]any{"path": "notes.md"}, "token: " + token, "none", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args, _ := json.Marshal(tc.args)
			env := fmt.Sprintf(`{"abi":"1.0","id":"x","phase":%q,"method":"tools/call","tool":%q,"arguments":%s`, tc.phase, tc.tool, args)
			if tc.result != "" {
				res, _ := json.Marshal(map[string]any{"content": []any{map[string]any{"type": "text", "text": tc.result}}})
				env += `,"result":` + string(res)
			}
			env += "}"
			v, err := e.Evaluate([]byte(env))
			if err != nil {
				t.Fatal(err)
			}
			if string(v.Action) != tc.want || !strings.Contains(v.Rule, tc.rule) {
				t.Errorf("action %s rule %q (%s), want %s %q", v.Action, v.Rule, v.Reason, tc.want, tc.rule)
			}
			if strings.Contains(v.Reason, token) || strings.Contains(string(v.Metadata), token) {
				t.Errorf("the verdict repeats the token: %s", v.Reason)
			}
			for _, ev := range v.Evidence {
				if b, _ := json.Marshal(ev); strings.Contains(string(b), token) {
					t.Errorf("evidence repeats the token: %s", b)
				}
			}
		})
	}
}
