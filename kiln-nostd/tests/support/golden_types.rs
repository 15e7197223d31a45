// The Rust type each golden case's type text is read into by a typed
// decoder: borrowed views only, so the same table serves the host tests
// (`tests/golden.rs`) and the emulated core, which has no allocator
// (`tests/firmware/tests/golden.rs`). Both bring it in with `include!`:
// the firmware crate is outside the workspace and cannot share a module.

#[derive(kiln_nostd::Frozen)]
struct IdBatch<'a> {
    id: i64,
    batch: kiln_nostd::Directory<'a>,
}

#[derive(kiln_nostd::Frozen)]
struct BatchTail<'a> {
    batch: kiln_nostd::Directory<'a>,
    tail: u32,
}

#[derive(kiln_nostd::Frozen)]
struct AB<'a> {
    a: i64,
    b: &'a str,
}

#[derive(kiln_nostd::Frozen)]
struct Inner<'a> {
    b: u8,
    c: Option<&'a str>,
}

#[derive(kiln_nostd::Frozen)]
struct Outer<'a> {
    a: Inner<'a>,
    d: kiln_nostd::ListView<'a, bool>,
    e: f64,
}

/// `$typed::<T>(args)` with `T` the Rust type of the type text: `Some` of
/// what it returns, or `None` when no type here has that text (only the
/// deeply nested DEPTH probes).
macro_rules! with_golden_type {
    ($type_text:expr, $typed:ident($($arg:expr),*)) => {{
        use kiln_nostd::{DictView, Directory, Empty, Int, ListView, PodList, Uint};
        match $type_text {
            "tensors" => Some($typed::<Directory>($($arg),*)),
            "struct{id:i64,batch:tensors,}" => Some($typed::<IdBatch>($($arg),*)),
            "struct{batch:tensors,tail:u32,}" => Some($typed::<BatchTail>($($arg),*)),
            "struct{a:struct{b:u8,c:opt<str>,},d:list<bool>,e:f64,}" => {
                Some($typed::<Outer>($($arg),*))
            }
            "struct{}" => Some($typed::<Empty>($($arg),*)),
            "list<f32>" => Some($typed::<PodList<f32>>($($arg),*)),
            "list<f64>" => Some($typed::<PodList<f64>>($($arg),*)),
            "list<i32>" => Some($typed::<PodList<i32>>($($arg),*)),
            "list<u8>" => Some($typed::<&[u8]>($($arg),*)),
            "list<str>" => Some($typed::<ListView<&str>>($($arg),*)),
            "list<struct{a:i64,b:str,}>" => Some($typed::<ListView<AB>>($($arg),*)),
            "list<struct{}>" => Some($typed::<ListView<Empty>>($($arg),*)),
            "list<tensors>" => Some($typed::<ListView<Directory>>($($arg),*)),
            "list<list<u16>>" => Some($typed::<ListView<PodList<u16>>>($($arg),*)),
            "dict<str,u32>" => Some($typed::<DictView<u32>>($($arg),*)),
            "dict<str,i64>" => Some($typed::<DictView<i64>>($($arg),*)),
            "dict<str,tensors>" => Some($typed::<DictView<Directory>>($($arg),*)),
            "opt<u32>" => Some($typed::<Option<u32>>($($arg),*)),
            "opt<opt<u8>>" => Some($typed::<Option<Option<u8>>>($($arg),*)),
            "opt<tensors>" => Some($typed::<Option<Directory>>($($arg),*)),
            "str" => Some($typed::<&str>($($arg),*)),
            "bool" => Some($typed::<bool>($($arg),*)),
            "u8" => Some($typed::<u8>($($arg),*)),
            "i8" => Some($typed::<i8>($($arg),*)),
            "u16" => Some($typed::<u16>($($arg),*)),
            "i16" => Some($typed::<i16>($($arg),*)),
            "u32" => Some($typed::<u32>($($arg),*)),
            "i32" => Some($typed::<i32>($($arg),*)),
            "u64" => Some($typed::<u64>($($arg),*)),
            "i64" => Some($typed::<i64>($($arg),*)),
            "int" => Some($typed::<Int>($($arg),*)),
            "uint" => Some($typed::<Uint>($($arg),*)),
            "f32" => Some($typed::<f32>($($arg),*)),
            "f64" => Some($typed::<f64>($($arg),*)),
            _ => None,
        }
    }};
}
