use kiln_nostd::Frozen;

#[derive(Frozen)]
struct Wrapper<'a, T, const N: usize> {
    name: &'a str,
    value: T,
    bytes: heapless::Vec<u8, N>,
}

fn main() {}
