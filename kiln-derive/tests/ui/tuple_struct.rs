use kiln_nostd::Frozen;

#[derive(Frozen)]
struct Pair(i64, u8);

fn main() {}
