//! Differential test against PCRE2: patterns from a grammar and subjects from a small alphabet, compared on compile errors, match spans and captures.
//!
//! The corpus is seeded and fixed in CI; `REGEX_DIFF_PATTERNS=N` runs more
//! patterns and `REGEX_DIFF_SEED=S` picks another seed.

use crate::oracle::{Outcome, our_outcome, ours, pcre2_outcome_groups, pcre2_regex};

/// xorshift64*: a small seeded generator so failures replay.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        (x.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 33) as usize % n
    }

    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len())]
    }
}

struct Generator {
    rng: Rng,
    groups: usize,
}

impl Generator {
    fn alternation(&mut self, depth: usize) -> String {
        let branches =
            1 + usize::from(self.rng.below(4) == 0) + usize::from(self.rng.below(8) == 0);
        (0..branches)
            .map(|_| self.concat(depth))
            .collect::<Vec<_>>()
            .join("|")
    }

    fn concat(&mut self, depth: usize) -> String {
        let items = self.rng.below(4) + usize::from(depth == 0);
        (0..items).map(|_| self.item(depth)).collect()
    }

    fn item(&mut self, depth: usize) -> String {
        if self.rng.below(8) == 0 {
            return self
                .rng
                .pick(&["^", "$", r"\b", r"\B", r"\A", r"\z", r"\Z"])
                .to_string();
        }
        let atom = self.atom(depth);
        let quantifier = match self.rng.below(10) {
            0 => "*",
            1 => "+",
            2 => "?",
            3 => self.rng.pick(&["{2}", "{1,2}", "{0,2}", "{2,}", "{,1}"]),
            _ => return atom,
        };
        let mode = self.rng.pick(&["", "", "", "?", "+"]);
        format!("{atom}{quantifier}{mode}")
    }

    fn atom(&mut self, depth: usize) -> String {
        let choice = if depth >= 3 {
            self.rng.below(6)
        } else {
            self.rng.below(10)
        };
        match choice {
            0..=2 => self
                .rng
                .pick(&["a", "b", "c", "a", "b", "A", "é", "-", r"\.", " "])
                .to_string(),
            3 => self
                .rng
                .pick(&[".", r"\d", r"\w", r"\s", r"\W", r"\D"])
                .to_string(),
            4 => self
                .rng
                .pick(&[
                    "[ab]",
                    "[^a]",
                    "[a-c]",
                    "[[:alpha:]]",
                    "[^ab\\n]",
                    "[b-]",
                    "[\\d-]",
                    "[É]",
                ])
                .to_string(),
            5 if self.groups > 0 => {
                let n = 1 + self.rng.below(self.groups + 1);
                format!("\\{n}")
            }
            5 => "a".to_string(),
            _ => {
                let opener = self.rng.pick(&[
                    "(", "(", "(", "(?:", "(?:", "(?<n{}>", "(?>", "(?=", "(?!", "(?<=", "(?<!",
                    "(?i:", "(?i)", "(?m)", "(?s)",
                ]);
                if opener.ends_with(')') {
                    return opener.to_string();
                }
                let opener = if opener.contains("{}") {
                    opener.replace("{}", &self.groups.to_string())
                } else {
                    opener.to_string()
                };
                if opener == "(" || opener.starts_with("(?<n") {
                    self.groups += 1;
                }
                format!("{opener}{})", self.alternation(depth + 1))
            }
        }
    }
}

fn subject(rng: &mut Rng) -> String {
    const ALPHABET: &[char] = &[
        'a', 'b', 'c', 'a', 'b', 'A', 'B', ' ', '\n', '-', 'é', '1', '.', 'É',
    ];
    let len = rng.below(10);
    (0..len)
        .map(|_| ALPHABET[rng.below(ALPHABET.len())])
        .collect()
}

#[test]
fn generated_corpus_agrees_with_pcre2() {
    let env = |name: &str, default: u64| {
        std::env::var(name)
            .ok()
            .and_then(|v| v.parse().ok())
            .unwrap_or(default)
    };
    let patterns = env("REGEX_DIFF_PATTERNS", 3000);
    let seed = env("REGEX_DIFF_SEED", 0x5eed_2026);
    let mut rng = Rng(seed.max(1));
    let mut mismatches = Vec::new();
    let (mut compared, mut compiled, mut matched) = (0u64, 0u64, 0u64);
    for _ in 0..patterns {
        let mut generator = Generator {
            rng: Rng(rng.below(usize::MAX) as u64 | 1),
            groups: 0,
        };
        let pattern = generator.alternation(0);
        let options = rng.pick(&["", "", "", "i", "m", "s", "x", "im", "is"]);
        let theirs = pcre2_regex(&pattern, options);
        let mine = ours(&pattern, options);
        if theirs.is_some() {
            compiled += 1;
        }
        for _ in 0..8 {
            let subject = subject(&mut rng);
            let groups = usize::MAX;
            let expected = pcre2_outcome_groups(theirs.as_ref(), &subject, groups);
            let actual = our_outcome(mine.as_ref(), &subject);
            compared += 1;
            if matches!(expected, Outcome::Matched(Some(_))) {
                matched += 1;
            }
            if expected == Outcome::GaveUp || actual == Outcome::GaveUp {
                continue;
            }
            if expected != actual {
                mismatches.push(format!(
                    "{pattern:?} /{options} on {subject:?}: pcre2 {expected:?}, ours {actual:?}"
                ));
            }
            if expected == Outcome::CompileError || actual == Outcome::CompileError {
                break;
            }
        }
    }
    println!(
        "differential: {patterns} patterns ({compiled} valid), {compared} comparisons, {matched} matches, {} mismatches",
        mismatches.len()
    );
    for m in mismatches.iter().take(40) {
        println!("  {m}");
    }
    assert!(
        mismatches.is_empty(),
        "{} mismatches with PCRE2",
        mismatches.len()
    );
}
