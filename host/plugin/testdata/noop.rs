//! A no-op Rust plugin for BenchmarkCallOverhead: takes its input, answers no opinion.
use palisade::Verdict;

fn evaluate(_env: &[u8]) -> Result<Verdict, String> {
    Ok(Verdict::none())
}

palisade::plugin!(evaluate);
