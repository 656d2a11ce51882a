//! Notes under a table instead of in it: a row's cell holds a short mark (`[1]`), and the note is
//! printed once under the table, wrapped to the output's width, however many rows share it.

use super::verbosity::WIDTH;

/// The notes of one table, numbered in the order first marked.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Footnotes {
    notes: Vec<String>,
}

impl Footnotes {
    /// The marks of `notes` that are there, joined (`[1][3]`); a new note gets the next number.
    pub fn marks<'a>(&mut self, notes: impl IntoIterator<Item = Option<&'a str>>) -> String {
        let mut marks = String::new();
        for note in notes.into_iter().flatten().filter(|note| !note.is_empty()) {
            let index = self.notes.iter().position(|known| known == note);
            let index = index.unwrap_or_else(|| {
                self.notes.push(note.to_owned());
                self.notes.len() - 1
            });
            marks.push_str(&format!("[{}]", index + 1));
        }
        marks
    }

    /// Every note under its number, wrapped to [`WIDTH`] with later lines indented past it.
    pub fn text(&self) -> String {
        let numbered = |(index, note): (usize, &String)| wrap(&format!("[{}] ", index + 1), note);
        self.notes.iter().enumerate().map(numbered).collect()
    }
}

/// `text` after `first`, wrapped to [`WIDTH`], later lines indented to where the text starts.
pub fn wrap(first: &str, text: &str) -> String {
    wrap_with(first, &" ".repeat(first.chars().count()), text)
}

/// `text` wrapped to [`WIDTH`], its first line after `first`, later ones after `later`.
fn wrap_with(first: &str, later: &str, text: &str) -> String {
    let options = textwrap::Options::new(WIDTH)
        .initial_indent(first)
        .subsequent_indent(later);
    let lines = textwrap::wrap(text, options);
    lines.iter().flat_map(|l| [l.trim_end(), "\n"]).collect()
}

/// `text` with every line wider than [`WIDTH`] wrapped, later lines indented 4 more than its
/// first: for prose among tables, written long. Lines that fit, tables among them, stay as they are.
pub fn fit(text: &str) -> String {
    let mut out = String::new();
    for line in text.lines() {
        let (first, rest) = line.split_at(line.len() - line.trim_start().len());
        match line.chars().count() <= WIDTH {
            true => out.push_str(&format!("{line}\n")),
            false => out.push_str(&wrap_with(first, &format!("{first}    "), rest)),
        }
    }
    if !text.ends_with('\n') {
        out.pop();
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notes_are_numbered_once_and_wrap_under_their_number() {
        let mut notes = Footnotes::default();
        let long = "ERROR: the barrier returned an error in round 3 of 5; ".repeat(6);
        assert_eq!(notes.marks([Some(long.as_str()), None, Some("")]), "[1]");
        assert_eq!(notes.marks([Some("short"), Some(long.as_str())]), "[2][1]");
        let text = notes.text();
        assert!(text.lines().all(|line| line.chars().count() <= WIDTH));
        assert!(text.starts_with("[1] ERROR") && text.ends_with("\n[2] short\n"));
        assert!(text.lines().nth(1).unwrap().starts_with("    "), "{text}");
        let fitted = fit(&format!("a table  1.00x\n  {}\n", "long ".repeat(30)));
        assert!(fitted.starts_with("a table  1.00x\n  long"));
        assert!(fitted.lines().nth(2).unwrap().starts_with("      long"));
    }
}
