// Package tune turns people's feedback on decisions into a proposed bundle (`palisade tune`,
// docs/DESIGN.md "Feedback that tunes"). Its input is the audit record: label events (a person
// marked a decision correct, a false positive or a false negative; each repeats the decision's
// call and stage verdicts) and the decisions of held calls a person approved or denied. Its
// output is a copy of the active bundle with
//
//   - exclusions for the detecting stages (plugins/injection, plugins/detector): the category
//     a false positive fired, at the argument path it fired in, for that server and tool
//     (sdk/go/exclude) — never a lower threshold for every call;
//   - allow rules for calls people approved again and again, scoped to the path prefix they
//     shared (`read_file` under `/workspace/**`), when no denied or false-negative call of
//     the group would match them;
//   - deny rules for false negatives whose arguments were recorded;
//   - re-fitted score thresholds (threshold.go): the detector's `threshold` and the injection
//     stage's `thresholds.<category>` (whose cut is the threshold minus `margin`);
//   - the detector's model retrained with the labelled texts (retrain.go), when
//     Options.TrainData names the training data;
//   - fixtures: every labelled call whose arguments were recorded, expected as the person
//     said, so the proposal's own activation checks it;
//   - a new version and sequence.
//
// With Options.Check (the CLI's default) the written proposal is built and its fixtures run; an
// exclusion that lets through a call the bundle's own fixtures deny or ask about is left out,
// with the fixtures of the labels it rested on (Report.LeftOut, Report.Unused say which).
//
// # Thresholds
//
// A stage's recorded score on a labelled decision is a negative (a false positive it flagged,
// or a decision people confirmed and nothing flagged) or a positive (a flag people confirmed,
// or a false negative it did not flag). A threshold moves only as far as the labels demand and
// only when every labelled decision then lands on its side: up to just above the highest
// flagged negative (4 decimals) when at least one positive bounds it and every positive stays
// at or above; down to the lowest positive when at least one negative bounds it and every
// negative stays below; never when negatives above and positives below overlap. Otherwise it
// is kept, and the report says why. Injection's score is its top category's: a decision counts
// for that category's threshold only when that category alone fired. The detector's
// `kind_thresholds` and `kind_label_thresholds` are left as they are. The scores are those recorded, from the model that
// decided; a retrained model is judged by its own dev-set threshold (below).
//
// # Retraining
//
// The texts a detector stage flagged on decisions marked false positive (the argument at each
// evidence path, with its window) join the training data as `benign`; for a decision marked
// false negative that a detector stage looked at, the string argument the old model scores
// highest joins as the attack category the label's note or a stage's labels name, else
// `prompt_injection` (else the model's first attack label). The model is refitted by
// host/infer/train on TrainData (train, dev, test) plus ExtraBenign and ExtraHeldout (as `make
// model` fits it) plus these texts, in
// audit-id order, with the bundle's preprocessor and labels: deterministic, so the same labels
// give the same model bytes. `thresholds.malicious` is re-picked on dev by `make model`'s rule
// (the lowest with dev FPR ≤ 1%); the proposal carries the model (same file and name, new
// sha256 in `models:`) and MODEL_CARD.diff.md (sha256, threshold, labelled texts flagged
// before and after at the stage's threshold, per-category test TPR/FPR/AUROC before and after).
// Without training data, or when it does not match the model (labels), the model is kept and
// Report.Detector.Skipped says why.
//
// The proposal is unsigned: `palisade tune --key` signs it like `bundle sign`, and it goes to
// the shadow lane first (`palisade tune --shadow`, or `palisade bundle shadow`). What could not become a proposal is listed
// with why (Report.Unused), never dropped silently. The caller checks the events' signatures
// (`tune --events` against trusted signers, `--from-gateway` by the gateway) and records what
// it skipped in Report.Events.
package tune
