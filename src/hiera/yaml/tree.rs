//! The first YAML document as a node tree, built from saphyr's events the
//! way Psych's TreeBuilder builds it from libyaml's: Psych parses the whole
//! first document before converting it, so a syntax error anywhere in it
//! wins over an alias or a disallowed class met earlier.

use super::source::Source;
use super::syntax::{self, Open, State};
use crate::hiera::{ErrorClass, HieraError};
use saphyr_parser::{Event, Marker, Parser, ScalarStyle, ScanError, Tag};
use std::borrow::Cow;

/// A node of the document, as Psych's `Psych::Nodes` see it.
#[derive(Clone, Debug)]
pub(super) enum Node<'a> {
    Scalar {
        value: Cow<'a, str>,
        /// The full tag (`tag:yaml.org,2002:str`, `!ruby/symbol`, `!`).
        tag: Option<String>,
        /// libyaml's `quoted_implicit`: not plain and untagged.
        quoted: bool,
    },
    Sequence {
        tag: Option<String>,
        items: Vec<Node<'a>>,
    },
    Mapping {
        tag: Option<String>,
        pairs: Vec<(Node<'a>, Node<'a>)>,
    },
    /// `*name`: always refused by Psych 4's `YAML.load`; under
    /// `safe_load(aliases: true)` (Puppet's reader) the node its anchor
    /// named last, when one was complete before it.
    Alias {
        name: String,
        target: Option<Box<Node<'a>>>,
    },
}

impl Node<'_> {
    pub(super) fn tag(&self) -> Option<&str> {
        match self {
            Node::Scalar { tag, .. } | Node::Sequence { tag, .. } | Node::Mapping { tag, .. } => {
                tag.as_deref()
            }
            Node::Alias { .. } => None,
        }
    }
}

/// How deeply collections may nest: saphyr's own limit for flow
/// collections, applied to block ones too. Psych converts recursively and
/// runs out of Ruby stack further on (about 1000 nested mappings, 1300
/// sequences); no data file comes near either, and the bound keeps every
/// recursion over loaded values (ours and the merges') within a thread's
/// stack.
pub(super) const MAX_DEPTH: usize = 255;

/// Ruby's `SystemStackError`, reported under its ancestor `Exception`.
fn too_deep() -> HieraError {
    HieraError::new(ErrorClass::Exception, "stack level too deep")
}

/// A collection still being read.
struct Frame<'a> {
    open: Open,
    /// saphyr's anchor id (0: none).
    anchor: usize,
    tag: Option<String>,
    items: Vec<Node<'a>>,
}

/// libyaml's full tag string: the resolved handle (prefix) and the suffix.
fn full_tag(tag: Option<&Tag>) -> Option<String> {
    tag.map(|t| format!("{}{}", t.handle, t.suffix))
}

/// A syntax error and the character index where it was found, to order it
/// against libyaml's tab errors.
pub(super) struct Located {
    pub(crate) index: usize,
    pub(crate) error: HieraError,
    /// saphyr's complaint was about a tab, which libyaml judges otherwise.
    pub(crate) about_tabs: bool,
    /// saphyr wanted lines indented further than libyaml does.
    pub(crate) indentation: bool,
}

impl Located {
    fn at(index: usize, error: HieraError) -> Located {
        Located {
            index,
            error,
            about_tabs: false,
            indentation: false,
        }
    }
}

/// saphyr's reports that concern tabs.
fn about_tabs(info: &str) -> bool {
    info.contains("tab") || info.contains("must be followed by a valid YAML whitespace")
}

/// The first document as read.
pub(super) struct Parsed<'a> {
    /// `None` for a stream without a document (empty, or only comments).
    pub(crate) root: Option<Node<'a>>,
    /// Where libyaml stops reading: the token after the root node, when the
    /// document ends there (its end is implicit, so libyaml looks no
    /// further, whatever follows); `None` when it reads to the end.
    pub(crate) cut: Option<usize>,
}

/// Parses up to the end of the first document.
///
/// # Errors
/// `Psych::SyntaxError` with libyaml's wording where saphyr's report can
/// be mapped onto it.
pub(super) fn first_document<'a>(src: &Source<'a>, aliases: bool) -> Result<Parsed<'a>, Located> {
    let mut parser = Parser::new_from_str(src.text());
    let mut anchors = Anchors::new(aliases);
    let mut stack: Vec<Frame<'a>> = Vec::new();
    let mut root: Option<Node<'a>> = None;
    let mut last_end: Option<Marker> = None;
    while let Some(next) = parser.next_event() {
        let (event, span) = match next {
            Ok(ok) => ok,
            Err(err) if err.info() == "while parsing node, found unknown anchor" => {
                // saphyr refuses an alias before its anchor but leaves its
                // state as if it had read it; Psych refuses every alias
                // later, by name, so carry on with an alias node.
                let name = src.alias_name(*err.marker());
                attach(&mut stack, &mut root, Node::Alias { name, target: None });
                continue;
            }
            Err(err) if err.info() == "missing explicit document end marker before directive" => {
                // libyaml ends the document at the directive, quietly.
                return Ok(ended(src, root, last_end));
            }
            Err(err)
                if root.is_none()
                    && stack.is_empty()
                    && err.info() == "invalid trailing content after double-quoted scalar" =>
            {
                // A quoted root with something after it: saphyr refuses the
                // scalar itself, libyaml ends the document after it.
                let at = *err.marker();
                let parsed = first_document(&src.prefix(at.index()), aliases)?;
                return Ok(Parsed {
                    root: parsed.root,
                    cut: Some(at.index()),
                });
            }
            Err(err)
                if root.is_none()
                    && stack.is_empty()
                    && err.info() == "wrongly indented line in block scalar"
                    && src.next_block_end().is_some() =>
            {
                // A block scalar root that saphyr (YAML 1.2) reads on into
                // lines libyaml leaves out: libyaml ends it, and the
                // document with it.
                let end = src.next_block_end().unwrap_or_default();
                let parsed = first_document(&src.prefix(end), aliases)?;
                return Ok(Parsed {
                    root: parsed.root,
                    cut: Some(end),
                });
            }
            Err(_) if root.is_some() && stack.is_empty() => {
                // The root is complete: libyaml ends the document at the
                // next token, whatever it is, and Psych looks no further.
                return Ok(ended(src, root, last_end));
            }
            Err(err) if err.info() == "recursion limit exceeded" => {
                // saphyr's flow nesting limit (255 levels).
                return Err(Located::at(err.marker().index(), too_deep()));
            }
            Err(err) => return Err(refused(&err, src, &stack, last_end, root.is_some())),
        };
        match event {
            Event::StreamStart | Event::Nothing | Event::DocumentStart(_) => {}
            Event::StreamEnd => {
                return Ok(Parsed {
                    root: None,
                    cut: None,
                });
            }
            Event::DocumentEnd => return Ok(ended(src, root, last_end)),
            Event::Alias(id) => {
                let name = src.alias_name(span.start);
                let target = anchors
                    .target(id)
                    .map_err(|error| Located::at(span.start.index(), error))?;
                attach(&mut stack, &mut root, Node::Alias { name, target });
            }
            Event::Scalar(value, style, anchor, tag) => {
                let plain = style == ScalarStyle::Plain && tag.is_none() && anchor == 0;
                let node = match stack.last() {
                    Some(frame) if plain => plain_in_collection(src, frame, span.start, value)?,
                    _ => scalar(src, span.end, value, style, tag.as_deref()),
                };
                anchors.define(anchor, &node);
                attach(&mut stack, &mut root, node);
            }
            Event::SequenceStart(anchor, ref tag) | Event::MappingStart(anchor, ref tag) => {
                if stack.len() >= MAX_DEPTH {
                    return Err(Located::at(span.start.index(), too_deep()));
                }
                let parent_flow = stack.last().is_some_and(|f| f.open.flow);
                let flow = parent_flow || src.opens_flow(span.end);
                let seq = matches!(event, Event::SequenceStart(..));
                stack.push(Frame {
                    anchor,
                    open: Open {
                        seq,
                        flow,
                        start: span.start,
                    },
                    tag: full_tag(tag.as_deref()),
                    items: Vec::new(),
                });
            }
            Event::SequenceEnd | Event::MappingEnd => {
                let frame = stack.pop().expect("saphyr balances collections");
                let anchor = frame.anchor;
                let node = frame.close();
                anchors.define(anchor, &node);
                attach(&mut stack, &mut root, node);
            }
        }
        last_end = Some(span.end);
    }
    Ok(Parsed { root, cut: None })
}

/// The nodes anchors name, for a reader that allows aliases. Psych hands
/// an alias the very object its anchor made; a value tree cannot share, so
/// each alias is a copy of the node, and the copies are bounded: ten
/// anchors each aliasing the one before ten times ("billion laughs") would
/// otherwise copy ten billion nodes.
struct Anchors<'a> {
    allowed: bool,
    nodes: std::collections::HashMap<usize, Node<'a>>,
    copied: usize,
}

/// How many nodes aliases may copy in one document: far more than real
/// data shares (a few defaults reused per entry), far less than a stall.
const MAX_ALIAS_COPIES: usize = 1_000_000;

impl<'a> Anchors<'a> {
    fn new(allowed: bool) -> Anchors<'a> {
        Anchors {
            allowed,
            nodes: std::collections::HashMap::new(),
            copied: 0,
        }
    }

    /// `anchor` (saphyr's id, 0 for none) now names `node`.
    fn define(&mut self, anchor: usize, node: &Node<'a>) {
        if self.allowed && anchor != 0 {
            self.nodes.insert(anchor, node.clone());
        }
    }

    /// What alias `id` stands for: `None` when aliases are refused, or its
    /// anchor's node is not complete (an alias inside its own anchor, which
    /// Psych would make a recursive structure of).
    fn target(&mut self, id: usize) -> Result<Option<Box<Node<'a>>>, HieraError> {
        let Some(node) = self.nodes.get(&id).filter(|_| self.allowed) else {
            return Ok(None);
        };
        self.copied = self.copied.saturating_add(node.size());
        if self.copied > MAX_ALIAS_COPIES {
            return Err(HieraError::new(
                ErrorClass::Exception,
                format!(
                    "the document's aliases copy more than {MAX_ALIAS_COPIES} nodes (hierad's bound; \
                     aliases that nest aliases grow exponentially)"
                ),
            ));
        }
        Ok(Some(Box::new(node.clone())))
    }
}

impl Node<'_> {
    /// How many nodes this one is, itself included.
    fn size(&self) -> usize {
        1 + match self {
            Node::Scalar { .. } | Node::Alias { target: None, .. } => 0,
            Node::Alias {
                target: Some(t), ..
            } => t.size(),
            Node::Sequence { items, .. } => items.iter().map(Node::size).sum(),
            Node::Mapping { pairs, .. } => pairs.iter().map(|(k, v)| k.size() + v.size()).sum(),
        }
    }
}

/// The document ends after its root: libyaml reads up to the next token.
fn ended<'a>(src: &Source<'a>, root: Option<Node<'a>>, last_end: Option<Marker>) -> Parsed<'a> {
    let cut = syntax::next_token(src, last_end).map(|m| m.index());
    Parsed { root, cut }
}

/// An untagged plain scalar inside a collection, where libyaml reads some
/// of what saphyr takes for plain text as indicators: in the flow context
/// a leading `:` is a value indicator (so `[:sym]` is an error) and a
/// leading `?` a key indicator (`[?x]` is `[{x: nil}]`); and a `:` with no
/// key before it is an error but where a `?` introduced the key.
fn plain_in_collection<'a>(
    src: &Source<'a>,
    frame: &Frame<'a>,
    at: Marker,
    value: Cow<'a, str>,
) -> Result<Node<'a>, Located> {
    let open = frame.open;
    let key_position = !open.seq && frame.items.len() % 2 == 0;
    let plain = |value| Node::Scalar {
        value,
        tag: None,
        quoted: false,
    };
    if value.is_empty() {
        if key_position && syntax::is_keyless_value(src, at) {
            let error = if open.flow {
                syntax::flow_node_expected(src, at)
            } else {
                syntax::missing_key(src, open.start)
            };
            return Err(Located::at(at.index(), error));
        }
    } else if open.flow {
        if value.starts_with(':') {
            return Err(Located::at(at.index(), syntax::flow_node_expected(src, at)));
        }
        if value.len() > 1 && value.starts_with('?') {
            if !open.seq && !key_position {
                return Err(Located::at(at.index(), syntax::flow_node_expected(src, at)));
            }
            let key = plain(match value {
                Cow::Borrowed(s) => Cow::Borrowed(&s[1..]),
                Cow::Owned(s) => Cow::Owned(s[1..].to_owned()),
            });
            if open.seq {
                return Ok(Node::Mapping {
                    tag: None,
                    pairs: vec![(key, plain(Cow::Borrowed("")))],
                });
            }
            return Ok(key);
        }
    }
    Ok(plain(value))
}

/// Hands a finished node to the collection being read, or makes it the root.
/// saphyr's error, reported in libyaml's words.
fn refused(
    err: &ScanError,
    src: &Source<'_>,
    stack: &[Frame<'_>],
    last_end: Option<Marker>,
    root_done: bool,
) -> Located {
    let open: Vec<Open> = stack.iter().map(|f| f.open).collect();
    let state = State {
        open: &open,
        last_end,
        root_done,
    };
    Located {
        index: err.marker().index(),
        error: syntax::translate(err, src, &state),
        about_tabs: about_tabs(err.info()),
        indentation: err.info().starts_with("invalid indentation"),
    }
}

/// A scalar as libyaml reads it: block scalars take libyaml's value.
fn scalar<'a>(
    src: &Source<'a>,
    end: Marker,
    mut value: Cow<'a, str>,
    style: ScalarStyle,
    tag: Option<&Tag>,
) -> Node<'a> {
    if matches!(style, ScalarStyle::Literal | ScalarStyle::Folded) {
        if let Some(libyaml) = src.next_block(end) {
            value = Cow::Borrowed(libyaml);
        }
    }
    let tag = full_tag(tag);
    let quoted = style != ScalarStyle::Plain && tag.is_none();
    Node::Scalar { value, tag, quoted }
}

impl<'a> Frame<'a> {
    /// The collection node of a closed frame.
    fn close(self) -> Node<'a> {
        if self.open.seq {
            return Node::Sequence {
                tag: self.tag,
                items: self.items,
            };
        }
        let mut items = self.items.into_iter();
        let mut pairs = Vec::with_capacity(items.len() / 2);
        while let (Some(k), Some(v)) = (items.next(), items.next()) {
            pairs.push((k, v));
        }
        Node::Mapping {
            tag: self.tag,
            pairs,
        }
    }
}

fn attach<'a>(stack: &mut [Frame<'a>], root: &mut Option<Node<'a>>, node: Node<'a>) {
    match stack.last_mut() {
        Some(frame) => frame.items.push(node),
        None => *root = Some(node),
    }
}
