//! What one attempt sends a model: [`Prompt`], made of labelled blocks.

use crate::Tool;

/// The message of one attempt: system instructions, the document, the tool,
/// and on a correction attempt the previous output and its violations.
///
/// Backends map the blocks to their own content blocks (the document stays a
/// block of its own, byte for byte, so it can be cached and quotes match it).
#[derive(Debug, Clone, PartialEq)]
pub struct Prompt {
    /// 1-based attempt number.
    pub attempt: u32,
    /// System instructions: the built-in ones (answer only through the tool),
    /// then the caller's own instructions and examples.
    pub system: String,
    /// The source document, byte for byte.
    pub document: String,
    /// The tool the model must call.
    pub tool: Tool,
    /// Present on a correction attempt: what the last attempt produced and what was wrong with it.
    pub correction: Option<Correction>,
}

/// The correction block of a retry: the last attempt only, so a prompt's size
/// does not grow with the attempt number.
#[derive(Debug, Clone, PartialEq)]
pub struct Correction {
    /// The previous attempt's output, verbatim.
    pub previous_output: String,
    /// The exact violations of the previous attempt (the `Violations` display).
    pub violations: String,
    /// The instruction: fix only what failed and keep everything else.
    pub instruction: String,
}
