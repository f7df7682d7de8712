//! The tools as OpenHands exposes them for SWE tasks: `execute_bash{command}`,
//! `str_replace_editor{command: view|create|str_replace|insert|undo_edit, path, file_text,
//! old_str, new_str, insert_line, view_range}` and `finish`, with OpenHands' messages: `cat -n`
//! numbered views, the unique-match rule of `str_replace`, per-file undo, and long output clipped
//! with a notice.
//!
//! The editor works through [`Runtime::exec`] only, so it behaves the same on a local copy and in
//! a container. Paths must be absolute and inside [`REPO_ROOT`].

use std::collections::HashMap;
use std::time::Duration;

use serde_json::{json, Value};

use super::runtime::{shell_quote, ExecOutput, Limits, Runtime, REPO_ROOT};
use crate::message::ToolSpec;
use crate::suite::EnvError;

pub const BASH: &str = "execute_bash";
pub const EDITOR: &str = "str_replace_editor";
pub const FINISH: &str = "finish";

/// Editor responses longer than this are clipped (OpenHands' `MAX_RESPONSE_LEN`).
pub const MAX_RESPONSE_CHARS: usize = 16_000;
/// Command output longer than this is clipped, keeping its head and tail.
pub const MAX_COMMAND_CHARS: usize = 30_000;
/// Lines shown around an edit.
const SNIPPET_LINES: usize = 4;

pub const FILE_CLIPPED_NOTICE: &str = "<response clipped><NOTE>Due to the max output limit, only part of this file has been shown to you. You should retry this tool after you have searched inside the file with `grep -n` in order to find the line numbers of what you are looking for.</NOTE>";
pub const OUTPUT_CLIPPED_NOTICE: &str =
    "<response clipped><NOTE>Due to the max output limit, only part of the full response has been shown to you.</NOTE>";

pub fn specs() -> Vec<ToolSpec> {
    vec![
        ToolSpec {
            name: BASH.into(),
            description: "Execute a bash command in the terminal, in the repository root.\n\
                          * One command per call; chain several with `&&` or `;`.\n\
                          * Long-running commands are killed after the time limit; long output is clipped.\n\
                          * The repository is at /testbed."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {"command": {"type": "string", "description": "The bash command to execute."}},
                "required": ["command"]
            }),
        },
        ToolSpec {
            name: EDITOR.into(),
            description: "Custom editing tool for viewing, creating and editing files.\n\
                          * State is persistent across calls.\n\
                          * `view` on a file shows it with line numbers (`cat -n`); on a directory it lists files up to 2 levels deep.\n\
                          * `create` cannot be used if the path already exists as a file.\n\
                          * Long output is clipped and marked with `<response clipped>`.\n\
                          * `undo_edit` reverts the last edit made to the file at `path`.\n\
                          Notes for `str_replace`: `old_str` must match EXACTLY one or more consecutive lines of the file, \
                          whitespace included; if it is not unique in the file the replacement is not performed, so include \
                          enough context to make it unique. `new_str` replaces `old_str`."
                .into(),
            parameters: json!({
                "type": "object",
                "properties": {
                    "command": {"type": "string", "enum": ["view", "create", "str_replace", "insert", "undo_edit"], "description": "The command to run."},
                    "path": {"type": "string", "description": "Absolute path to a file or directory, e.g. `/testbed/file.py` or `/testbed`."},
                    "file_text": {"type": "string", "description": "Required for `create`: the content of the file."},
                    "old_str": {"type": "string", "description": "Required for `str_replace`: the string in `path` to replace."},
                    "new_str": {"type": "string", "description": "For `str_replace`: the new string (empty to delete). Required for `insert`: the string to insert."},
                    "insert_line": {"type": "integer", "description": "Required for `insert`: `new_str` is inserted AFTER this line (0 = at the top)."},
                    "view_range": {"type": "array", "items": {"type": "integer"}, "description": "Optional for `view` on a file: [start, end] lines, 1-based; end -1 = to the end."}
                },
                "required": ["command", "path"]
            }),
        },
        ToolSpec {
            name: FINISH.into(),
            description: "Finish the task: call this when the issue is resolved (or you cannot make further progress).".into(),
            parameters: json!({
                "type": "object",
                "properties": {"message": {"type": "string", "description": "A short summary of what was done."}},
                "required": []
            }),
        },
    ]
}

/// Clip `text` to `max` characters, keeping the head, then the notice.
pub fn clip_head(text: &str, max: usize, notice: &str) -> String {
    if text.chars().count() <= max {
        return text.to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{head}{notice}")
}

/// Clip command output to `max` characters, keeping its head and tail around the notice (test
/// summaries are at the end).
pub fn clip_middle(text: &str, max: usize) -> String {
    let n = text.chars().count();
    if n <= max {
        return text.to_string();
    }
    let half = max / 2;
    let head: String = text.chars().take(half).collect();
    let tail: String = text.chars().skip(n - half).collect();
    format!("{head}\n{OUTPUT_CLIPPED_NOTICE}\n{tail}")
}

/// The observation of a bash command, as OpenHands reports it.
pub fn bash_observation(out: &ExecOutput, timeout: Duration) -> String {
    let mut s = clip_middle(out.output.trim_end_matches('\n'), MAX_COMMAND_CHARS);
    if out.truncated {
        s.push_str("\n[Output was longer than the runtime keeps; the rest was dropped.]");
    }
    if out.timed_out {
        s.push_str(&format!("\n[The command timed out after {} seconds and was killed.]", timeout.as_secs_f64()));
    } else {
        s.push_str(&format!("\n[The command completed with exit code {}.]", out.exit_code.unwrap_or(-1)));
    }
    s
}

/// `cat -n` of `content`, numbered from `first`.
pub fn numbered(content: &str, first: usize) -> String {
    let clipped = clip_head(content, MAX_RESPONSE_CHARS, FILE_CLIPPED_NOTICE);
    clipped.split('\n').enumerate().map(|(i, l)| format!("{:6}\t{}", i + first, expand_tabs(l))).collect::<Vec<_>>().join("\n")
}

fn expand_tabs(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    for c in line.chars() {
        if c == '\t' {
            let pad = 8 - out.chars().count() % 8;
            out.extend(std::iter::repeat_n(' ', pad));
        } else {
            out.push(c);
        }
    }
    out
}

fn make_output(content: &str, description: &str, first: usize) -> String {
    format!("Here's the result of running `cat -n` on {description}:\n{}\n", numbered(content, first))
}

/// What an editor call did to the repository.
#[derive(Clone, Debug, PartialEq)]
pub struct EditorResult {
    pub observation: String,
    /// A file's content changed.
    pub edited: Option<String>,
    /// The call was refused (bad arguments, no match, ...).
    pub error: bool,
}

fn refuse(message: impl Into<String>) -> EditorResult {
    EditorResult { observation: format!("ERROR:\n{}", message.into()), edited: None, error: true }
}

enum Entry {
    Missing,
    Dir(String),
    File(String),
}

/// `/testbed/a/../b` → `/testbed/b`; `None` if the path leaves the repository.
pub fn normalise(path: &str) -> Option<String> {
    let mut parts: Vec<&str> = Vec::new();
    for p in path.split('/') {
        match p {
            "" | "." => {}
            ".." => {
                parts.pop()?;
            }
            x => parts.push(x),
        }
    }
    let s = format!("/{}", parts.join("/"));
    (s == REPO_ROOT || s.starts_with(&format!("{REPO_ROOT}/"))).then_some(s)
}

/// The editor with its undo history (per file, every earlier content).
#[derive(Default)]
pub struct Editor {
    history: HashMap<String, Vec<String>>,
}

fn limits() -> Limits {
    Limits { timeout: Duration::from_secs(30), max_output: 16 * 1024 * 1024 }
}

impl Editor {
    fn entry(rt: &mut dyn Runtime, path: &str) -> Result<Entry, EnvError> {
        let q = shell_quote(path);
        let cmd = format!(
            "if [ -d {q} ]; then printf 'D\\n'; find {q} -maxdepth 2 -not -path '*/.*' | sort; elif [ -f {q} ]; then printf 'F\\n'; cat -- {q}; else printf 'M\\n'; fi"
        );
        // a read of the workspace: pure
        let out = rt.exec_pure(&cmd, &limits())?;
        if !out.ok() {
            // the command ran in the agent's workspace: what stops it is the agent's doing (a
            // file made unreadable, a folder replaced by a link)
            return Err(EnvError::Action(format!("reading {path}: {}", out.output.trim())));
        }
        let (tag, rest) = out.output.split_once('\n').unwrap_or((out.output.as_str(), ""));
        Ok(match tag {
            "D" => Entry::Dir(rest.to_string()),
            "F" => Entry::File(rest.to_string()),
            _ => Entry::Missing,
        })
    }

    fn write(rt: &mut dyn Runtime, path: &str, content: &str) -> Result<(), EnvError> {
        let out = rt.write_file(path, content.as_bytes(), &limits())?;
        if !out.ok() {
            return Err(EnvError::Action(format!("writing {path}: {}", out.output.trim())));
        }
        Ok(())
    }

    /// Run one `str_replace_editor` call. `Err` only for a failure of the runtime itself.
    pub fn call(&mut self, rt: &mut dyn Runtime, args: &serde_json::Map<String, Value>) -> Result<EditorResult, EnvError> {
        match self.call_unchecked(rt, args) {
            // the agent's own doing (a NUL in a path, a file it made unreadable): the editor's
            // error, which the agent sees and which counts against it, as in OpenHands
            Err(EnvError::Action(why)) => Ok(refuse(why)),
            other => other,
        }
    }

    fn call_unchecked(&mut self, rt: &mut dyn Runtime, args: &serde_json::Map<String, Value>) -> Result<EditorResult, EnvError> {
        let Some(command) = args.get("command").and_then(Value::as_str) else {
            return Ok(refuse("Parameter `command` is required: one of view, create, str_replace, insert, undo_edit."));
        };
        let Some(raw_path) = args.get("path").and_then(Value::as_str) else {
            return Ok(refuse(format!("Parameter `path` is required for command: {command}.")));
        };
        if !raw_path.starts_with('/') {
            return Ok(refuse(format!(
                "The path {raw_path} is not an absolute path, it should start with `/`. Maybe you meant {REPO_ROOT}/{}?",
                raw_path.trim_start_matches("./")
            )));
        }
        let Some(path) = normalise(raw_path) else {
            return Ok(refuse(format!("The path {raw_path} is outside the repository {REPO_ROOT}.")));
        };
        let path = path.as_str();
        let entry = Self::entry(rt, path)?;
        match (&entry, command) {
            (Entry::Missing, c) if c != "create" => return Ok(refuse(format!("The path {path} does not exist. Please provide a valid path."))),
            (Entry::Dir(_), c) if c != "view" => {
                return Ok(refuse(format!("The path {path} is a directory and only the `view` command can be used on directories.")))
            }
            _ => {}
        }
        let text = |k: &str| args.get(k).and_then(Value::as_str);
        match command {
            "view" => {
                let range = args.get("view_range").filter(|v| !v.is_null());
                match entry {
                    Entry::Dir(listing) => {
                        if range.is_some() {
                            return Ok(refuse("The `view_range` parameter is not allowed when `path` points to a directory."));
                        }
                        Ok(EditorResult {
                            observation: format!(
                                "Here's the files and directories up to 2 levels deep in {path}, excluding hidden items:\n{listing}"
                            ),
                            edited: None,
                            error: false,
                        })
                    }
                    Entry::File(content) => {
                        let Some(range) = range else {
                            return Ok(EditorResult { observation: make_output(&content, path, 1), edited: None, error: false });
                        };
                        let pair: Option<(i64, i64)> = range.as_array().filter(|a| a.len() == 2).and_then(|a| Some((a[0].as_i64()?, a[1].as_i64()?)));
                        let Some((start, end)) = pair else { return Ok(refuse("Invalid `view_range`. It should be a list of two integers.")) };
                        let lines: Vec<&str> = content.split('\n').collect();
                        let n = lines.len() as i64;
                        if start < 1 || start > n {
                            return Ok(refuse(format!("Invalid `view_range`: [{start}, {end}]. Its first element `{start}` should be within the range of lines of the file: [1, {n}]")));
                        }
                        if end != -1 && end > n {
                            return Ok(refuse(format!("Invalid `view_range`: [{start}, {end}]. Its second element `{end}` should be smaller than the number of lines in the file: `{n}`")));
                        }
                        if end != -1 && end < start {
                            return Ok(refuse(format!("Invalid `view_range`: [{start}, {end}]. Its second element `{end}` should be larger or equal than its first `{start}`")));
                        }
                        let stop = if end == -1 { n } else { end } as usize;
                        let slice = lines[(start as usize - 1)..stop].join("\n");
                        Ok(EditorResult { observation: make_output(&slice, path, start as usize), edited: None, error: false })
                    }
                    Entry::Missing => unreachable!("handled above"),
                }
            }
            "create" => {
                if let Entry::File(_) | Entry::Dir(_) = entry {
                    return Ok(refuse(format!("File already exists at: {path}. Cannot overwrite files using command `create`.")));
                }
                let Some(body) = text("file_text") else { return Ok(refuse("Parameter `file_text` is required for command: create.")) };
                Self::write(rt, path, body)?;
                self.history.entry(path.to_string()).or_default();
                Ok(EditorResult { observation: format!("File created successfully at: {path}"), edited: Some(path.to_string()), error: false })
            }
            "str_replace" => {
                let Entry::File(content) = entry else { unreachable!("a file") };
                let Some(old) = text("old_str") else { return Ok(refuse("Parameter `old_str` is required for command: str_replace.")) };
                let new = text("new_str").unwrap_or("");
                if old == new {
                    return Ok(refuse("No replacement was performed. `new_str` and `old_str` must be different."));
                }
                let hits: Vec<usize> = content.match_indices(old).map(|(i, _)| i).collect();
                if old.is_empty() || hits.is_empty() {
                    return Ok(refuse(format!("No replacement was performed, old_str `{old}` did not appear verbatim in {path}.")));
                }
                if hits.len() > 1 {
                    let lines: Vec<String> = hits.iter().map(|i| (content[..*i].matches('\n').count() + 1).to_string()).collect();
                    return Ok(refuse(format!(
                        "No replacement was performed. Multiple occurrences of old_str `{old}` in lines [{}]. Please ensure it is unique.",
                        lines.join(", ")
                    )));
                }
                let updated = content.replacen(old, new, 1);
                Self::write(rt, path, &updated)?;
                self.history.entry(path.to_string()).or_default().push(content.clone());
                let at = content[..hits[0]].matches('\n').count();
                let start = at.saturating_sub(SNIPPET_LINES);
                let end = at + SNIPPET_LINES + new.matches('\n').count();
                let snippet: Vec<&str> = updated.split('\n').skip(start).take(end - start + 1).collect();
                Ok(EditorResult {
                    observation: format!(
                        "The file {path} has been edited. {}Review the changes and make sure they are as expected. Edit the file again if necessary.",
                        make_output(&snippet.join("\n"), &format!("a snippet of {path}"), start + 1)
                    ),
                    edited: Some(path.to_string()),
                    error: false,
                })
            }
            "insert" => {
                let Entry::File(content) = entry else { unreachable!("a file") };
                let Some(line) = args.get("insert_line").and_then(Value::as_i64) else {
                    return Ok(refuse("Parameter `insert_line` is required for command: insert."));
                };
                let Some(new) = text("new_str") else { return Ok(refuse("Parameter `new_str` is required for command: insert.")) };
                let lines: Vec<&str> = content.split('\n').collect();
                let n = lines.len() as i64;
                if line < 0 || line > n {
                    return Ok(refuse(format!(
                        "Invalid `insert_line` parameter: {line}. It should be within the range of lines of the file: [0, {n}]"
                    )));
                }
                let at = line as usize;
                let new_lines: Vec<&str> = new.split('\n').collect();
                let mut out: Vec<&str> = lines[..at].to_vec();
                out.extend(&new_lines);
                out.extend(&lines[at..]);
                let updated = out.join("\n");
                Self::write(rt, path, &updated)?;
                self.history.entry(path.to_string()).or_default().push(content.clone());
                let start = at.saturating_sub(SNIPPET_LINES);
                let stop = (at + new_lines.len() + SNIPPET_LINES).min(out.len());
                Ok(EditorResult {
                    observation: format!(
                        "The file {path} has been edited. {}Review the changes and make sure they are as expected (correct indentation, no duplicate lines, etc). Edit the file again if necessary.",
                        make_output(&out[start..stop].join("\n"), "a snippet of the edited file", start + 1)
                    ),
                    edited: Some(path.to_string()),
                    error: false,
                })
            }
            "undo_edit" => {
                let Some(prev) = self.history.get_mut(path).and_then(|h| h.pop()) else {
                    return Ok(refuse(format!("No edit history found for {path}.")));
                };
                Self::write(rt, path, &prev)?;
                Ok(EditorResult {
                    observation: format!("Last edit to {path} undone successfully. {}", make_output(&prev, path, 1)),
                    edited: Some(path.to_string()),
                    error: false,
                })
            }
            other => Ok(refuse(format!(
                "Unrecognized command {other}. The allowed commands for the {EDITOR} tool are: view, create, str_replace, insert, undo_edit"
            ))),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_stay_in_the_repository() {
        assert_eq!(normalise("/testbed/a/../b.py").as_deref(), Some("/testbed/b.py"));
        assert_eq!(normalise("/testbed/../etc/passwd"), None);
        assert_eq!(normalise("/etc"), None);
        assert_eq!(normalise("/testbed").as_deref(), Some("/testbed"));
    }

    #[test]
    fn clipping_keeps_head_and_tail() {
        let s = "a".repeat(20) + &"b".repeat(20);
        let c = clip_middle(&s, 10);
        assert!(c.starts_with("aaaaa\n<response clipped>") && c.ends_with("\nbbbbb"), "{c}");
        assert_eq!(clip_head("abc", 5, "!"), "abc");
        assert_eq!(clip_head("abcdef", 2, "!"), "ab!");
        assert_eq!(numbered("x\n\ty", 3), "     3\tx\n     4\t        y");
    }
}
