use kiln_nostd::Frozen;

#[derive(Frozen)]
union Bits {
    int: u32,
    float: f32,
}

fn main() {}
