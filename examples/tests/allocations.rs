//! Constructing a compiled parser builds no automaton, and streaming plain
//! text allocates nothing per chunk: counted with a global allocator, per
//! thread.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

retort::response_template!("../templates/smollm3.json");

struct Counting;

// Per thread: the parser runs on the test's thread, and allocations that
// other threads of the process may make meanwhile (the test harness's) are
// not the parser's. Const-initialised cells without destructors: reading
// them never allocates.
thread_local! {
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static BYTES: Cell<usize> = const { Cell::new(0) };
}

fn note(bytes: usize) {
    let _ = ALLOCATIONS.try_with(|c| c.set(c.get() + 1));
    let _ = BYTES.try_with(|c| c.set(c.get() + bytes));
}

// SAFETY: every call is forwarded to the system allocator unchanged; the
// counters are only read.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        // SAFETY: the caller upholds `alloc`'s contract.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` came from `alloc` with this layout.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note(new_size);
        // SAFETY: the caller upholds `realloc`'s contract.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

/// (allocations, bytes) made by `f`.
fn count<T>(f: impl FnOnce() -> T) -> ((usize, usize), T) {
    let (a, b) = (ALLOCATIONS.with(Cell::get), BYTES.with(Cell::get));
    let out = f();
    (
        (ALLOCATIONS.with(Cell::get) - a, BYTES.with(Cell::get) - b),
        out,
    )
}

// One test function: the counters are global, so nothing may run beside it.
#[test]
fn compiled_parsers_build_no_automaton_and_stream_without_allocating() {
    let json = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../templates/smollm3.json"
    ))
    .unwrap();

    // The run-time mode parses the JSON and builds every automaton.
    let (dynamic, template) = count(|| retort::Template::from_json(&json).unwrap());
    drop(template);

    // The first compiled parser puts the template together from static
    // tables (names, defaults, the transform, one Arc per delimiter) plus
    // the parser's own state; the second one is only the parser.
    let (first, p) = count(|| smollm3::Parser::new("").unwrap());
    drop(p);
    let (second, p) = count(|| smollm3::Parser::new("").unwrap());
    drop(p);
    println!("run-time template: {dynamic:?}; compiled first: {first:?}; second: {second:?}");
    assert!(
        first.1 * 10 < dynamic.1,
        "compiled construction allocated {first:?}, run-time loading {dynamic:?}"
    );
    // Measured: 60 allocations and 8 KB for the first construction,
    // against thousands of allocations and hundreds of KB for building the
    // automata; these bounds leave room without admitting a DFA build.
    assert!(
        first.0 < 200 && first.1 < 32 * 1024,
        "first construction: {first:?}"
    );
    // Later parsers allocate nothing until text arrives: the defaults are
    // applied at `finalize`, the scanner's state is made on first use.
    assert_eq!(second, (0, 0), "second construction");
    let prompt = "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n";
    let (with_prompt, p) = count(|| smollm3::Parser::new(prompt).unwrap());
    drop(p);
    assert_eq!(with_prompt, (0, 0), "construction with a prompt");

    // Streaming plain text into a region: the region's body grows
    // geometrically, so 1000 chunks cost a handful of reallocations, not one
    // per chunk (events borrow the piece fed)...
    let mut p = smollm3::Parser::new(prompt).unwrap();
    let chunk = "plain words with no delimiter in them, just prose to show. ";
    for _ in 0..10 {
        p.feed(chunk).unwrap();
    }
    let (streaming, ()) = count(|| {
        for _ in 0..1000 {
            let events = p.feed(chunk).unwrap();
            assert!(events.len() <= 1);
        }
    });
    println!("1000 feeds of {} bytes: {streaming:?}", chunk.len());
    assert!(streaming.0 <= 12, "streaming allocated {streaming:?}");

    // ...and none at all once room is reserved.
    let mut p = smollm3::Parser::new(prompt).unwrap();
    p.feed(chunk).unwrap();
    p.reserve(1000 * chunk.len());
    let (reserved, ()) = count(|| {
        for _ in 0..1000 {
            assert_eq!(p.feed(chunk).unwrap().len(), 1);
        }
    });
    assert_eq!(reserved, (0, 0), "streaming after reserve");

    // In 4-byte pieces, as tokens arrive.
    let mut p = smollm3::Parser::new(prompt).unwrap();
    p.feed(chunk).unwrap();
    p.reserve(64 * 1024);
    let text = chunk.repeat(1000);
    let (tokens, ()) = count(|| {
        for piece in text.as_bytes().chunks(4) {
            let piece = std::str::from_utf8(piece).unwrap();
            p.feed(piece).unwrap();
        }
    });
    assert_eq!(tokens, (0, 0), "streaming 4-byte pieces after reserve");
}
