// Package hostfn builds the host functions Palisade grants to plugin stages: sample (LLM judge),
// infer (ML model), kv (small shared state) and infer_score (the model's scores as bytes,
// granted by infer). Each is built from a small interface declared here, so the package never
// imports the LLM, inference, chain or proxy packages.
//
// Every stage gets all four imports (a module that imports one must be able to instantiate);
// a call to one the stage was not granted returns {"error":"capability not granted: NAME"}.
package hostfn
