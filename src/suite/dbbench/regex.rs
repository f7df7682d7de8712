//! A small regular-expression matcher for MySQL's `REGEXP` / `RLIKE` / `REGEXP_LIKE` in the
//! embedded executor.
//!
//! Supported: literals, `.`, `^`, `$`, `[...]` classes with ranges, negation and POSIX names
//! (`[[:digit:]]`), `\d \w \s \D \W \S \b`, escapes, groups `(...)` / `(?:...)`, alternation
//! `|`, and the greedy quantifiers `* + ? {n} {n,} {n,m}`. Matching is case-insensitive (DBBench
//! columns use a `_ci` collation) and runs as a Thompson-NFA simulation, so time is linear in the
//! text and no pattern can blow up. Backreferences and look-around are not supported (an error,
//! like an invalid pattern: MySQL's 3685).

#[derive(Clone, Debug)]
enum Pred {
    Char(char),
    Any,
    /// Ranges, and whether the class is negated.
    Class(Vec<(char, char)>, bool),
}

#[derive(Clone, Debug)]
enum Node {
    Pred(Pred),
    Bol,
    Eol,
    WordBoundary(bool),
    Seq(Vec<Node>),
    Alt(Vec<Node>),
    Repeat(Box<Node>, u32, Option<u32>),
}

#[derive(Clone, Debug)]
enum Inst {
    Pred(Pred),
    Split(usize, usize),
    Jmp(usize),
    Bol,
    Eol,
    WordBoundary(bool),
    Match,
}

/// A compiled pattern.
#[derive(Clone, Debug)]
pub struct Regex {
    prog: Vec<Inst>,
}

/// An invalid or unsupported pattern.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RegexError(pub String);

const MAX_INSTS: usize = 20_000;

struct Parser<'a> {
    chars: Vec<char>,
    i: usize,
    _src: &'a str,
}

fn err<T>(m: &str) -> Result<T, RegexError> {
    Err(RegexError(m.to_string()))
}

fn class_escape(c: char) -> Option<(Vec<(char, char)>, bool)> {
    let digit = vec![('0', '9')];
    let word = vec![('0', '9'), ('a', 'z'), ('A', 'Z'), ('_', '_')];
    let space = vec![(' ', ' '), ('\t', '\r')];
    Some(match c {
        'd' => (digit, false),
        'D' => (digit, true),
        'w' => (word, false),
        'W' => (word, true),
        's' => (space, false),
        'S' => (space, true),
        _ => return None,
    })
}

fn posix_class(name: &str) -> Option<Vec<(char, char)>> {
    Some(match name {
        "alpha" => vec![('a', 'z'), ('A', 'Z')],
        "digit" => vec![('0', '9')],
        "alnum" => vec![('0', '9'), ('a', 'z'), ('A', 'Z')],
        "upper" => vec![('A', 'Z')],
        "lower" => vec![('a', 'z')],
        "space" => vec![(' ', ' '), ('\t', '\r')],
        "blank" => vec![(' ', ' '), ('\t', '\t')],
        "punct" => vec![('!', '/'), (':', '@'), ('[', '`'), ('{', '~')],
        "xdigit" => vec![('0', '9'), ('a', 'f'), ('A', 'F')],
        "cntrl" => vec![('\0', '\x1f'), ('\x7f', '\x7f')],
        _ => return None,
    })
}

fn simple_escape(c: char) -> char {
    match c {
        'n' => '\n',
        't' => '\t',
        'r' => '\r',
        'f' => '\x0c',
        'v' => '\x0b',
        other => other,
    }
}

impl Parser<'_> {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.i).copied()
    }

    fn alt(&mut self, depth: usize) -> Result<Node, RegexError> {
        if depth > 200 {
            return err("nesting too deep");
        }
        let mut alts = vec![self.seq(depth)?];
        while self.peek() == Some('|') {
            self.i += 1;
            alts.push(self.seq(depth)?);
        }
        Ok(if alts.len() == 1 { alts.pop().unwrap_or(Node::Seq(vec![])) } else { Node::Alt(alts) })
    }

    fn seq(&mut self, depth: usize) -> Result<Node, RegexError> {
        let mut items = Vec::new();
        while let Some(c) = self.peek() {
            if c == '|' || c == ')' {
                break;
            }
            let atom = self.atom(depth)?;
            let atom = self.quantified(atom)?;
            items.push(atom);
        }
        Ok(Node::Seq(items))
    }

    fn number(&mut self) -> Option<u32> {
        let start = self.i;
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.i += 1;
        }
        if self.i == start {
            return None;
        }
        self.chars[start..self.i].iter().collect::<String>().parse().ok()
    }

    fn quantified(&mut self, mut atom: Node) -> Result<Node, RegexError> {
        loop {
            let (min, max) = match self.peek() {
                Some('*') => (0, None),
                Some('+') => (1, None),
                Some('?') => (0, Some(1)),
                Some('{') => {
                    let save = self.i;
                    self.i += 1;
                    let Some(min) = self.number() else {
                        // A literal `{`.
                        self.i = save;
                        return Ok(atom);
                    };
                    let max = if self.peek() == Some(',') {
                        self.i += 1;
                        self.number()
                    } else {
                        Some(min)
                    };
                    if self.peek() != Some('}') {
                        return err("bad repetition");
                    }
                    if max.is_some_and(|m| m < min) || min > 1000 || max.is_some_and(|m| m > 1000) {
                        return err("bad repetition bounds");
                    }
                    (min, max)
                }
                _ => return Ok(atom),
            };
            self.i += 1;
            // Lazy and possessive suffixes match the same set of strings.
            if matches!(self.peek(), Some('?') | Some('+')) {
                self.i += 1;
            }
            atom = Node::Repeat(Box::new(atom), min, max);
        }
    }

    fn atom(&mut self, depth: usize) -> Result<Node, RegexError> {
        let Some(c) = self.peek() else { return err("unexpected end") };
        self.i += 1;
        Ok(match c {
            '.' => Node::Pred(Pred::Any),
            '^' => Node::Bol,
            '$' => Node::Eol,
            '(' => {
                if self.peek() == Some('?') {
                    if self.chars.get(self.i + 1) == Some(&':') {
                        self.i += 2;
                    } else {
                        return err("look-around and flags are not supported");
                    }
                }
                let inner = self.alt(depth + 1)?;
                if self.peek() != Some(')') {
                    return err("missing )");
                }
                self.i += 1;
                inner
            }
            '[' => self.class()?,
            '\\' => {
                let Some(e) = self.peek() else { return err("trailing backslash") };
                self.i += 1;
                if let Some((r, neg)) = class_escape(e) {
                    Node::Pred(Pred::Class(r, neg))
                } else if e == 'b' || e == 'B' {
                    Node::WordBoundary(e == 'b')
                } else if e.is_ascii_digit() && e != '0' {
                    return err("backreferences are not supported");
                } else {
                    Node::Pred(Pred::Char(simple_escape(e)))
                }
            }
            '*' | '+' | '?' => return err("nothing to repeat"),
            other => Node::Pred(Pred::Char(other)),
        })
    }

    fn class(&mut self) -> Result<Node, RegexError> {
        let mut neg = false;
        if self.peek() == Some('^') {
            neg = true;
            self.i += 1;
        }
        let mut ranges = Vec::new();
        let mut first = true;
        loop {
            let Some(c) = self.peek() else { return err("missing ]") };
            self.i += 1;
            if c == ']' && !first {
                break;
            }
            first = false;
            let lo = match c {
                '[' if self.peek() == Some(':') => {
                    let rest: String = self.chars[self.i..].iter().collect();
                    let Some(end) = rest.find(":]") else { return err("bad class name") };
                    let name = &rest[1..end];
                    let Some(r) = posix_class(name) else { return err("unknown class name") };
                    ranges.extend(r);
                    self.i += rest[..end + 2].chars().count();
                    continue;
                }
                '\\' => {
                    let Some(e) = self.peek() else { return err("trailing backslash") };
                    self.i += 1;
                    if let Some((r, n)) = class_escape(e) {
                        if n {
                            return err("negated escapes inside classes are not supported");
                        }
                        ranges.extend(r);
                        continue;
                    }
                    simple_escape(e)
                }
                other => other,
            };
            if self.peek() == Some('-') && self.chars.get(self.i + 1).is_some_and(|&n| n != ']') {
                self.i += 1;
                let mut hi = self.peek().unwrap_or(lo);
                self.i += 1;
                if hi == '\\' {
                    hi = simple_escape(self.peek().unwrap_or('\\'));
                    self.i += 1;
                }
                if hi < lo {
                    return err("bad range");
                }
                ranges.push((lo, hi));
            } else {
                ranges.push((lo, lo));
            }
        }
        Ok(Node::Pred(Pred::Class(ranges, neg)))
    }
}

fn emit(node: &Node, prog: &mut Vec<Inst>) -> Result<(), RegexError> {
    if prog.len() > MAX_INSTS {
        return err("pattern too large");
    }
    match node {
        Node::Pred(p) => prog.push(Inst::Pred(p.clone())),
        Node::Bol => prog.push(Inst::Bol),
        Node::Eol => prog.push(Inst::Eol),
        Node::WordBoundary(b) => prog.push(Inst::WordBoundary(*b)),
        Node::Seq(items) => {
            for it in items {
                emit(it, prog)?;
            }
        }
        Node::Alt(alts) => {
            let mut jumps = Vec::new();
            for (k, a) in alts.iter().enumerate() {
                if k + 1 < alts.len() {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(a, prog)?;
                    jumps.push(prog.len());
                    prog.push(Inst::Jmp(0));
                    let next = prog.len();
                    prog[split] = Inst::Split(split + 1, next);
                } else {
                    emit(a, prog)?;
                }
            }
            let end = prog.len();
            for j in jumps {
                prog[j] = Inst::Jmp(end);
            }
        }
        Node::Repeat(x, min, max) => {
            for _ in 0..*min {
                emit(x, prog)?;
            }
            match max {
                None => {
                    let split = prog.len();
                    prog.push(Inst::Split(split + 1, 0));
                    emit(x, prog)?;
                    prog.push(Inst::Jmp(split));
                    let end = prog.len();
                    prog[split] = Inst::Split(split + 1, end);
                }
                Some(m) => {
                    for _ in *min..*m {
                        let split = prog.len();
                        prog.push(Inst::Split(split + 1, 0));
                        emit(x, prog)?;
                        let end = prog.len();
                        prog[split] = Inst::Split(split + 1, end);
                    }
                }
            }
        }
    }
    Ok(())
}

fn fold(c: char) -> char {
    c.to_lowercase().next().unwrap_or(c)
}

fn pred_matches(p: &Pred, c: char) -> bool {
    match p {
        Pred::Any => c != '\n',
        Pred::Char(x) => fold(*x) == fold(c),
        Pred::Class(ranges, neg) => {
            let cands = [c, fold(c), c.to_uppercase().next().unwrap_or(c)];
            let hit = ranges.iter().any(|&(lo, hi)| cands.iter().any(|&x| x >= lo && x <= hi));
            hit != *neg
        }
    }
}

fn is_word(c: Option<char>) -> bool {
    c.is_some_and(|c| c.is_alphanumeric() || c == '_')
}

impl Regex {
    pub fn new(pattern: &str) -> Result<Regex, RegexError> {
        let mut p = Parser { chars: pattern.chars().collect(), i: 0, _src: pattern };
        let node = p.alt(0)?;
        if p.i != p.chars.len() {
            return err("unmatched )");
        }
        let mut prog = Vec::new();
        emit(&node, &mut prog)?;
        prog.push(Inst::Match);
        Ok(Regex { prog })
    }

    /// Follow empty transitions from `pc` at `pos`, collecting the threads that consume a
    /// character (or match). `marks[pc] == generation` means already visited at this position.
    fn add(&self, list: &mut Vec<usize>, marks: &mut [u32], generation: u32, pc: usize, text: &[char], pos: usize) {
        let mut stack = vec![pc];
        while let Some(pc) = stack.pop() {
            if marks[pc] == generation {
                continue;
            }
            marks[pc] = generation;
            match &self.prog[pc] {
                Inst::Jmp(t) => stack.push(*t),
                Inst::Split(a, b) => {
                    stack.push(*b);
                    stack.push(*a);
                }
                Inst::Bol => {
                    if pos == 0 {
                        stack.push(pc + 1);
                    }
                }
                Inst::Eol => {
                    if pos == text.len() {
                        stack.push(pc + 1);
                    }
                }
                Inst::WordBoundary(want) => {
                    let before = if pos > 0 { Some(text[pos - 1]) } else { None };
                    let at = is_word(before) != is_word(text.get(pos).copied());
                    if at == *want {
                        stack.push(pc + 1);
                    }
                }
                Inst::Pred(_) | Inst::Match => list.push(pc),
            }
        }
    }

    /// Does the pattern match anywhere in `text`? An error if the match would take too long
    /// (MySQL's `regexp_time_limit`).
    pub fn is_match(&self, text: &str) -> Result<bool, RegexError> {
        const BUDGET: u64 = 20_000_000;
        let chars: Vec<char> = text.chars().collect();
        let mut marks = vec![u32::MAX; self.prog.len()];
        let mut generation = 0u32;
        let mut clist: Vec<usize> = Vec::new();
        let mut steps = 0u64;
        for pos in 0..=chars.len() {
            // Start a new attempt at every position (unanchored search).
            self.add(&mut clist, &mut marks, generation, 0, &chars, pos);
            if clist.iter().any(|&pc| matches!(self.prog[pc], Inst::Match)) {
                return Ok(true);
            }
            if pos == chars.len() {
                break;
            }
            steps += clist.len() as u64 + 1;
            if steps > BUDGET {
                return err("Timeout exceeded in regular expression match.");
            }
            generation = generation.wrapping_add(1);
            if generation == u32::MAX {
                marks.iter_mut().for_each(|m| *m = u32::MAX - 1);
                generation = 0;
            }
            let mut nlist = Vec::with_capacity(clist.len());
            for &pc in &clist {
                if let Inst::Pred(p) = &self.prog[pc] {
                    if pred_matches(p, chars[pos]) {
                        self.add(&mut nlist, &mut marks, generation, pc + 1, &chars, pos + 1);
                    }
                }
            }
            clist = nlist;
        }
        Ok(false)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn m(p: &str, t: &str) -> bool {
        Regex::new(p).unwrap().is_match(t).unwrap()
    }

    #[test]
    fn matching() {
        assert!(m("June", "4 june 1997"));
        assert!(m("^[0-9]+$", "1997"));
        assert!(!m("^[0-9]+$", "19a97"));
        assert!(m("^(a|b)+c$", "ababc"));
        assert!(m("colou?r", "color"));
        assert!(m("^\\d{4}-\\d{2}$", "2011-05"));
        assert!(!m("^\\d{4}$", "201"));
        assert!(m("[[:alpha:]]+ [[:digit:]]", "June 4"));
        assert!(m("\\bcup\\b", "world cup final"));
        assert!(!m("\\bcup\\b", "cupboard"));
        assert!(m("(a*)*b", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaab"));
        assert!(!m("(a*)*b", &"a".repeat(5000)));
        assert!(m("[^x]", "y"));
        assert!(m("a.c", "abc"));
    }

    #[test]
    fn errors() {
        assert!(Regex::new("(abc").is_err());
        assert!(Regex::new("*a").is_err());
        assert!(Regex::new("(a)\\1").is_err());
        assert!(Regex::new("[abc").is_err());
        assert!(Regex::new("a{3,1}").is_err());
    }
}
