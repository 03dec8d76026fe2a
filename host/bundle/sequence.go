package bundle

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"github.com/added060/palisade/host/internal/atomicfile"
)

// Sequences remembers, per bundle name, the highest sequence accepted (bundle.yaml sequence:,
// covered by the signature) in one JSON file: the rollback protection of the one-process modes
// (proxy, hook, mcp), which keep no bundle history. The gateway's Manager judges against its
// history instead. A process reads the file on every check and rewrites it atomically (a temp
// file renamed over it) only when a sequence goes up.
type Sequences struct {
	// Path is the state file (host/gateway uses DATA_DIR/bundles/sequences.json).
	Path string
	mu   sync.Mutex
}

// SeenBundle is what Sequences keeps per bundle name.
type SeenBundle struct {
	Sequence uint64 `json:"sequence"`
	Version  string `json:"version,omitempty"`
	Digest   string `json:"digest,omitempty"`
}

// Accept refuses m with ErrOlder (reject reason older_sequence, the error serve gives) when
// its sequence is below the highest one accepted under its name, and otherwise records a
// higher sequence.
func (s *Sequences) Accept(m *Manifest, digest string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	seen, err := s.read()
	if err != nil {
		return err
	}
	last, ok := seen[m.Name]
	if ok && m.Sequence < last.Sequence {
		return fmt.Errorf("%w: %s sequence %d is below %s %s sequence %d, accepted before (roll back explicitly: remove %q from %s)",
			ErrOlder, m.Version, m.Sequence, m.Name, last.Version, last.Sequence, m.Name, s.Path)
	}
	if ok && m.Sequence == last.Sequence || !ok && m.Sequence == 0 {
		return nil
	}
	seen[m.Name] = SeenBundle{Sequence: m.Sequence, Version: m.Version, Digest: digest}
	return s.write(seen)
}

// Seen returns what the file holds, by bundle name.
func (s *Sequences) Seen() (map[string]SeenBundle, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.read()
}

func (s *Sequences) read() (map[string]SeenBundle, error) {
	seen := map[string]SeenBundle{}
	b, err := os.ReadFile(s.Path)
	if errors.Is(err, fs.ErrNotExist) {
		return seen, nil
	}
	if err != nil {
		return nil, fmt.Errorf("bundle: sequences: %w", err)
	}
	if err := json.Unmarshal(b, &seen); err != nil {
		// Refuse rather than forget: an unreadable file must not reopen rollbacks.
		return nil, fmt.Errorf("bundle: sequences %s unreadable (fix or remove it): %w", s.Path, err)
	}
	return seen, nil
}

func (s *Sequences) write(seen map[string]SeenBundle) error {
	b, err := json.MarshalIndent(seen, "", "  ")
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(s.Path), 0o700); err != nil {
		return fmt.Errorf("bundle: sequences: %w", err)
	}
	if err := atomicfile.Write(s.Path, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("bundle: sequences: %w", err)
	}
	return nil
}
