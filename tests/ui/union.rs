use extract::Extractable;

#[derive(Extractable)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
