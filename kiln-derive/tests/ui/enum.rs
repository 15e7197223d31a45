use kiln_nostd::Frozen;

#[derive(Frozen)]
enum Reading {
    Int(i64),
    Text { text: u8 },
}

fn main() {}
