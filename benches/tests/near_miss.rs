//! Near misses cost work linear in the input, per bundled template: text made
//! of every proper prefix of every delimiter's literal runs, fed one byte at a
//! time, is read a bounded number of times (bytes the scanner reads, counted
//! by the parser, not timed), and costs no backtracking beyond the budget.

use retort::Template;
use retort_benches::near_miss::{near_misses, repeat_to};
use retort_benches::templates_dir;

fn scanned_bytewise(t: &Template, text: &str) -> u64 {
    let mut p = t.parser("").expect("an empty prompt parses");
    let mut from = 0;
    for (i, _) in text.char_indices().skip(1).chain([(text.len(), ' ')]) {
        if p.feed(&text[from..i]).is_err() {
            break;
        }
        from = i;
    }
    p.bytes_scanned()
}

#[test]
fn near_misses_are_read_a_bounded_number_of_times_for_every_bundled_template() {
    let mut paths: Vec<_> = std::fs::read_dir(templates_dir())
        .expect("templates/")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    paths.sort();
    assert!(paths.len() > 40, "the bundled templates are there");
    let mut worst = (0.0f64, String::new());
    for path in paths {
        let t = Template::from_json(&std::fs::read_to_string(&path).expect("readable"))
            .expect("a bundled template loads");
        let unit = near_misses(&t);
        assert!(!unit.is_empty(), "{}: no near misses", path.display());
        let small = repeat_to(&unit, 20_000);
        let large = repeat_to(&unit, 200_000);
        let (a, b) = (scanned_bytewise(&t, &small), scanned_bytewise(&t, &large));
        // Work per byte must not grow with the input, and stays small.
        let per_byte = b as f64 / large.len() as f64;
        assert!(
            per_byte <= 8.0,
            "{}: {per_byte:.2} bytes read per byte of near misses",
            path.display()
        );
        assert!(
            (b as f64) <= 11.0 * a as f64,
            "{}: 10x the text cost {b} reads against {a}",
            path.display()
        );
        if per_byte > worst.0 {
            worst = (per_byte, path.display().to_string());
        }
    }
    eprintln!("worst: {:.2} reads per byte ({})", worst.0, worst.1);
}
