use kiln_nostd::Frozen;

struct Celsius(f32);

#[derive(Frozen)]
struct Reading {
    id: i64,
    temperature: Celsius,
}

fn main() {}
