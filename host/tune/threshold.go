package tune

import (
	"cmp"
	"fmt"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/added060/palisade/host/audit"
	"github.com/added060/palisade/host/bundle"
)

// ThresholdChange is a stage score threshold tune looked at: moved when the labels justify it,
// else kept with why.
type ThresholdChange struct {
	Stage string `json:"stage"`
	// Key is the config key: `threshold` (plugins/detector) or `thresholds.<category>`
	// (plugins/injection, whose cut is the threshold minus its margin).
	Key   string  `json:"key"`
	Old   float64 `json:"old"`
	New   float64 `json:"new"`
	Moved bool    `json:"moved"`
	Why   string  `json:"why"`
	// Negatives and Positives count the labelled decisions behind it: false positives and
	// confirmed allows; confirmed flags and false negatives.
	Negatives int `json:"negatives"`
	Positives int `json:"positives"`
}

// Default cuts of the stages whose thresholds tune re-fits (plugins/detector/scan,
// plugins/injection/detect).
const (
	detectorThreshold  = 0.9
	injectionThreshold = 0.7
	injectionMargin    = 0.05
)

// scorePoints are the labelled scores of one stage threshold.
type scorePoints struct {
	stage, key string
	neg, pos   []float64
}

// refit is the threshold rule (doc.go): given the cut now (a score ≥ cut is flagged), the
// scores of labelled negatives (false positives, confirmed allows) and positives (confirmed
// flags, false negatives), it moves the cut only as far as the labels demand and only when
// every labelled decision ends on its right side:
//   - negatives at or above the cut: up to just above the highest of them (4 decimals), if
//     every positive stays at or above it and there is at least one positive to bound it;
//   - positives below the cut: down to the lowest of them, if every negative stays below it
//     and there is at least one negative to bound it;
//   - both, or neither: not moved.
func refit(cut float64, neg, pos []float64) (float64, bool, string) {
	var fpAbove, fnBelow int
	for _, s := range neg {
		if s >= cut {
			fpAbove++
		}
	}
	for _, s := range pos {
		if s < cut {
			fnBelow++
		}
	}
	switch {
	case fpAbove == 0 && fnBelow == 0:
		return cut, false, "the labels agree with it"
	case fpAbove > 0 && fnBelow > 0:
		return cut, false, fmt.Sprintf("%d labelled false positives score above it and %d positives below: no threshold separates them", fpAbove, fnBelow)
	case fpAbove > 0:
		up := math.Floor(slices.Max(neg)*1e4)/1e4 + 1e-4
		up = math.Round(up*1e4) / 1e4
		switch {
		case len(pos) == 0:
			return cut, false, fmt.Sprintf("%d labelled false positives score above it, but no labelled true positive bounds a higher one (the exclusions cover them)", fpAbove)
		case up > 1:
			return cut, false, "a labelled false positive scores 1: no threshold clears it"
		case slices.Min(pos) < up:
			return cut, false, fmt.Sprintf("clearing %d labelled false positives (up to %.4f) would also clear a labelled true positive (%.4f)", fpAbove, up, slices.Min(pos))
		}
		return up, true, fmt.Sprintf("%d labelled false positives scored %.4f at most; every labelled positive (%d) scores %.4f or more", fpAbove, slices.Max(neg), len(pos), slices.Min(pos))
	default:
		down := math.Floor(slices.Min(pos)*1e4) / 1e4
		switch {
		case len(neg) == 0:
			return cut, false, fmt.Sprintf("%d labelled false negatives score below it, but no labelled negative bounds a lower one", fnBelow)
		case slices.Max(neg) >= down:
			return cut, false, fmt.Sprintf("flagging %d labelled false negatives (down to %.4f) would also flag a labelled negative (%.4f)", fnBelow, down, slices.Max(neg))
		}
		return down, true, fmt.Sprintf("%d labelled false negatives scored %.4f at least; every labelled negative (%d) scores below it (%.4f at most)", fnBelow, slices.Min(pos), len(neg), slices.Max(neg))
	}
}

// thresholds gathers the labelled scores of the detector and injection stages and re-fits
// their thresholds.
func (p *proposer) thresholds(labels []audit.Event, m *bundle.Manifest) {
	points := map[string]*scorePoints{}
	add := func(stage, key string, score float64, positive bool) {
		k := stage + "\x00" + key
		sp := points[k]
		if sp == nil {
			sp = &scorePoints{stage: stage, key: key}
			points[k] = sp
		}
		if positive {
			sp.pos = append(sp.pos, score)
		} else {
			sp.neg = append(sp.neg, score)
		}
	}
	for _, ev := range labels {
		v := ev.Label.Verdict
		for _, s := range ev.Stages {
			if s.Observe || s.Error != "" || s.Skipped {
				continue
			}
			stageFlagged := flagged(s.Action)
			var positive bool
			switch {
			case v == audit.LabelFalsePositive && stageFlagged:
				positive = false
			case v == audit.LabelFalseNegative && !stageFlagged && !flagged(ev.Action):
				positive = true
			case v == audit.LabelCorrect && stageFlagged:
				positive = true
			case v == audit.LabelCorrect && !flagged(ev.Action):
				positive = false
			default:
				continue
			}
			switch p.kinds[s.Stage] {
			case kindDetector:
				add(s.Stage, "threshold", s.Score, positive)
			case kindInjection:
				// The score is the top category's (its rule injection/<category>/...); one
				// category's threshold decides only when it alone fired.
				parts := strings.Split(s.Rule, "/")
				if stageFlagged && len(s.Labels) == 1 && len(parts) >= 2 && parts[1] == s.Labels[0] {
					add(s.Stage, "thresholds."+s.Labels[0], s.Score, positive)
				}
			}
		}
	}
	for _, k := range slices.Sorted(maps.Keys(points)) {
		sp := points[k]
		cfg := map[string]any{}
		for _, s := range m.Stages {
			if s.Name == sp.stage && s.Config != nil {
				cfg = s.Config
			}
		}
		cut, margin := detectorThreshold, 0.0
		if sp.key == "threshold" {
			if t, ok := number(cfg["threshold"]); ok && t > 0 {
				cut = t
			}
		} else {
			margin, cut = injectionMargin, injectionThreshold
			if mg, ok := number(cfg["margin"]); ok {
				margin = mg
			}
			if th, ok := cfg["thresholds"].(map[string]any); ok {
				if t, ok := number(th[strings.TrimPrefix(sp.key, "thresholds.")]); ok {
					cut = t
				}
			}
			cut -= margin
		}
		nc, moved, why := refit(cut, sp.neg, sp.pos)
		p.r.Thresholds = append(p.r.Thresholds, ThresholdChange{Stage: sp.stage, Key: sp.key, Old: round4(cut + margin), New: round4(nc + margin),
			Moved: moved, Why: why, Negatives: len(sp.neg), Positives: len(sp.pos)})
	}
	slices.SortFunc(p.r.Thresholds, func(a, b ThresholdChange) int {
		return cmp.Or(cmp.Compare(a.Stage, b.Stage), cmp.Compare(a.Key, b.Key))
	})
}

// writeThresholds sets the moved thresholds in the stages' config.
func (p *proposer) writeThresholds(root *yaml.Node) error {
	for _, c := range p.r.Thresholds {
		if !c.Moved {
			continue
		}
		st := stageNode(root, c.Stage)
		if st == nil {
			return fmt.Errorf("tune: stage %s not in %s", c.Stage, bundle.ManifestFile)
		}
		cfg := mapping(st, "config")
		v := strconv.FormatFloat(c.New, 'f', -1, 64)
		if cat, ok := strings.CutPrefix(c.Key, "thresholds."); ok {
			setScalar(mapping(cfg, "thresholds"), cat, v)
		} else {
			setScalar(cfg, c.Key, v)
		}
	}
	return nil
}
