use kiln_nostd::Frozen;

#[derive(Frozen)]
struct Measure {
    id: i64,
    größe: u32,
    r#über: u8,
}

fn main() {}
