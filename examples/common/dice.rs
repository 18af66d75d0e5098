//! A small deterministic generator (SplitMix64), shared by the long
//! corpus's writer (`make_long.rs`) and the stand-in model that reads it
//! (`examples/common/long_stand_in.rs`): the same numbers on every platform
//! and in every Rust version, so a corpus never changes unless its program
//! does. Each user adds the draws it needs as methods of its own.

/// The generator's state.
pub struct Dice(pub u64);

impl Dice {
    /// A number below `n` (0 when `n` is 0).
    pub fn roll(&mut self, n: u64) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        (z ^ (z >> 31)) % n.max(1)
    }
}
