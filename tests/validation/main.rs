//! The syntax and structure layers and what a model's output can do to them:
//! codes, paths and recoverability; a differential property test against
//! JSON Schema and serde; hostile outputs (mutated, huge, deep) that must give
//! violations, never a panic; feedback that output cannot forge or blow up;
//! panics inside validation caught as one violation.

mod differential;
mod feedback;
mod hostile_output;
mod one_walk;
mod quote_policy;
mod structure_layer;
mod validator_panics;
mod variants;
