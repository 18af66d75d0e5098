//! The runtime without the derive and without HTTP: the retry loop with
//! scripted models and a caller's own validator, `Tool::strict` and the
//! structure layer against schemas in the exact shape schemars produces.

mod pointers;
mod strict;
mod structure;
