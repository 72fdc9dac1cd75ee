//! Ruby's `PrettyPrint` (prettyprint.rb, Ruby 3.1): Oppen's line-breaking
//! algorithm with groups, breakables and nesting, kept step for step so that
//! `pp` output is identical at every width. No I/O.
//!
//! The Ruby original works on a buffer of texts and breakables and a queue
//! of open groups ordered by depth; when the pending line would exceed the
//! width it breaks the outermost group that still has breakables. The same
//! data structures are used here (groups live in an arena, indexed by id),
//! including details that look redundant, such as empty texts, because they
//! decide where lines break.

use std::collections::VecDeque;

/// One group: its nesting depth, how many of its breakables are still in
/// the buffer, and whether it has been broken.
struct Group {
    depth: usize,
    breakables: usize,
    broken: bool,
}

enum Item {
    /// Consecutive texts; `width` is their length in characters.
    Text { text: String, width: usize },
    /// A place where the line may break: `sep` if the group stays flat,
    /// else a newline and `indent` spaces.
    Breakable {
        sep: &'static str,
        width: usize,
        indent: usize,
        group: usize,
    },
}

impl Item {
    fn width(&self) -> usize {
        match self {
            Item::Text { width, .. } | Item::Breakable { width, .. } => *width,
        }
    }
}

pub(super) struct PrettyPrint {
    output: String,
    maxwidth: usize,
    output_width: usize,
    buffer_width: usize,
    buffer: VecDeque<Item>,
    groups: Vec<Group>,
    group_stack: Vec<usize>,
    /// `GroupQueue`: open groups by depth, in creation order.
    queue: Vec<Vec<usize>>,
    indent: usize,
}

impl PrettyPrint {
    /// A printer whose lines hold at most `maxwidth` characters where a
    /// break is possible (`PrettyPrint.new(output, maxwidth)`).
    pub(super) fn new(maxwidth: usize) -> PrettyPrint {
        PrettyPrint {
            output: String::new(),
            maxwidth,
            output_width: 0,
            buffer_width: 0,
            buffer: VecDeque::new(),
            groups: vec![Group {
                depth: 0,
                breakables: 0,
                broken: false,
            }],
            group_stack: vec![0],
            queue: vec![vec![0]],
            indent: 0,
        }
    }

    /// Flushes the buffer and returns everything printed.
    pub(super) fn finish(mut self) -> String {
        self.flush();
        self.output
    }

    /// `text(obj)`: its width is its length in characters, as in Ruby.
    pub(super) fn text(&mut self, obj: &str) {
        let width = obj.chars().count();
        if self.buffer.is_empty() {
            self.output.push_str(obj);
            self.output_width += width;
        } else {
            match self.buffer.back_mut() {
                Some(Item::Text { text, width: w }) => {
                    text.push_str(obj);
                    *w += width;
                }
                _ => self.buffer.push_back(Item::Text {
                    text: obj.to_owned(),
                    width,
                }),
            }
            self.buffer_width += width;
            self.break_outmost_groups();
        }
    }

    /// `breakable(sep)`.
    pub(super) fn breakable(&mut self, sep: &'static str) {
        let group = *self.group_stack.last().expect("root group");
        if self.groups[group].broken {
            self.flush();
            self.newline(self.indent);
            self.output_width = self.indent;
            self.buffer_width = 0;
        } else {
            let width = sep.chars().count();
            self.buffer.push_back(Item::Breakable {
                sep,
                width,
                indent: self.indent,
                group,
            });
            self.groups[group].breakables += 1;
            self.buffer_width += width;
            self.break_outmost_groups();
        }
    }

    /// `group(indent, open, close) { body }`.
    pub(super) fn group(
        &mut self,
        indent: usize,
        open: &str,
        close: &str,
        body: impl FnOnce(&mut PrettyPrint),
    ) {
        self.text(open);
        let depth = self.groups[*self.group_stack.last().expect("root group")].depth + 1;
        let id = self.groups.len();
        self.groups.push(Group {
            depth,
            breakables: 0,
            broken: false,
        });
        self.group_stack.push(id);
        self.enqueue(id);
        self.indent += indent;
        body(self);
        self.indent -= indent;
        self.group_stack.pop();
        if self.groups[id].breakables == 0 {
            self.dequeue_group(id);
        }
        self.text(close);
    }

    fn newline(&mut self, indent: usize) {
        self.output.push('\n');
        self.output.extend(std::iter::repeat_n(' ', indent));
    }

    fn break_outmost_groups(&mut self) {
        while self.maxwidth < self.output_width + self.buffer_width {
            let Some(group) = self.deq() else { return };
            while self.groups[group].breakables > 0 {
                let item = self.buffer.pop_front().expect("breakable in buffer");
                self.buffer_width -= item.width();
                self.output_item(item);
            }
            while matches!(self.buffer.front(), Some(Item::Text { .. })) {
                let item = self.buffer.pop_front().expect("text in buffer");
                self.buffer_width -= item.width();
                self.output_item(item);
            }
        }
    }

    fn flush(&mut self) {
        while let Some(item) = self.buffer.pop_front() {
            self.output_item(item);
        }
        self.buffer_width = 0;
    }

    /// `Text#output` / `Breakable#output`.
    fn output_item(&mut self, item: Item) {
        match item {
            Item::Text { text, width } => {
                self.output.push_str(&text);
                self.output_width += width;
            }
            Item::Breakable {
                sep,
                width,
                indent,
                group,
            } => {
                self.groups[group].breakables -= 1;
                if self.groups[group].broken {
                    self.newline(indent);
                    self.output_width = indent;
                } else {
                    if self.groups[group].breakables == 0 {
                        self.dequeue_group(group);
                    }
                    self.output.push_str(sep);
                    self.output_width += width;
                }
            }
        }
    }

    fn enqueue(&mut self, group: usize) {
        let depth = self.groups[group].depth;
        while self.queue.len() <= depth {
            self.queue.push(Vec::new());
        }
        self.queue[depth].push(group);
    }

    /// `GroupQueue#deq`: the outermost group with breakables, newest first
    /// within a depth; groups without breakables met on the way are marked
    /// broken and dropped.
    fn deq(&mut self) -> Option<usize> {
        for depth in 0..self.queue.len() {
            let level = &mut self.queue[depth];
            if let Some(i) = (0..level.len())
                .rev()
                .find(|&i| self.groups[level[i]].breakables > 0)
            {
                let group = level.remove(i);
                self.groups[group].broken = true;
                return Some(group);
            }
            for &group in level.iter() {
                self.groups[group].broken = true;
            }
            level.clear();
        }
        None
    }

    fn dequeue_group(&mut self, group: usize) {
        let depth = self.groups[group].depth;
        if let Some(level) = self.queue.get_mut(depth) {
            level.retain(|&g| g != group);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A list printed the way pp prints an Array: `[a, b, c]`.
    fn list(q: &mut PrettyPrint, items: &[&str]) {
        q.group(1, "[", "]", |q| {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    q.text(",");
                    q.breakable(" ");
                }
                q.text(item);
            }
        });
    }

    #[test]
    fn breaks_only_what_does_not_fit() {
        let cases: &[(usize, &str)] = &[
            (79, "[aaa, bbb, ccc]"),
            (15, "[aaa, bbb, ccc]"),
            (14, "[aaa,\n bbb,\n ccc]"),
            (0, "[aaa,\n bbb,\n ccc]"),
        ];
        for &(width, want) in cases {
            let mut q = PrettyPrint::new(width);
            list(&mut q, &["aaa", "bbb", "ccc"]);
            assert_eq!(q.finish(), want, "width {width}");
        }
    }

    #[test]
    fn outer_group_breaks_first() {
        let mut q = PrettyPrint::new(12);
        q.group(1, "[", "]", |q| {
            list(q, &["a", "b"]);
            q.text(",");
            q.breakable(" ");
            list(q, &["c", "d"]);
        });
        assert_eq!(q.finish(), "[[a, b],\n [c, d]]");
    }
}
