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
//   - fixtures: every labelled call whose arguments were recorded, expected as the person
//     said, so the proposal's own activation checks it;
//   - a new version and sequence.
//
// The proposal is unsigned: `palisade tune --key` signs it like `bundle sign`, and it goes to
// the shadow lane first (`palisade bundle shadow`). What could not become a proposal is listed
// with why (Report.Unused), never dropped silently.
package tune
