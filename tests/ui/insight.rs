//! The console's pages over the routes of "Why, what changed, what will
//! change" (node scopes, provenance, `nodes/changed`, dry-runs, the
//! change feed).

use crate::browser::{Browser, Console};
use serde_json::json;

const ENV: &str = "/api/v1/config/environments";

/// Environment 2: levels `nodes`, two registered nodes, the root's
/// `globals` values, and node-1's own, which override one key.
fn nodes(console: &Console) {
    let admin = &console.tokens.admin;
    let created = console.api(
        admin,
        "POST",
        ENV,
        Some(json!({"id": 2, "components": ["fuel"], "hierarchy_levels": ["nodes"]})),
    );
    assert_eq!(created.0, 201, "{}", created.1);
    let register = format!("{ENV}/2/hierarchy_levels/nodes/register");
    let put = console.api(admin, "PUT", &register, Some(json!(["node-1", "node-2"])));
    assert_eq!(put.0, 200, "{}", put.1);
    let root = format!("{ENV}/2/resources/globals/values");
    let node = format!("{ENV}/2/nodes/node-1/resources/globals/values");
    let w = &console.tokens.write;
    assert_eq!(
        console
            .api(w, "PUT", &root, Some(json!({"colour": "red", "size": 1})))
            .0,
        204
    );
    assert_eq!(
        console
            .api(w, "PUT", &node, Some(json!({"colour": "blue"})))
            .0,
        204
    );
    let scope = format!("{ENV}/2/nodes/node-1/scope");
    let s = console.api(w, "PUT", &scope, Some(json!({"::fqdn": "node-1"})));
    assert_eq!(s.0, 204, "{}", s.1);
}

#[tokio::test]
async fn the_node_and_changes_pages_load_with_no_console_error() {
    let console = Console::start("");
    nodes(&console);
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.page("#/node?env=2&node=node-1", "node").await;
    browser.check_and_shoot("node").await;
    browser.page("#/changes", "changes").await;
    browser.wait("#feed li").await;
    browser.check_and_shoot("changes").await;
    browser.close().await;
}

#[tokio::test]
async fn from_an_environment_to_a_node_to_a_keys_provenance() {
    let console = Console::start("");
    nodes(&console);
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.click("a[href*=\"#/node?env=2&node=node-1\"]").await;
    browser.ready("node").await;
    assert!(browser.text("#scope").await.contains("::fqdn"));
    let row = "section[data-resource=globals] tr[data-key=colour]";
    browser.click(&format!("{row} details summary")).await;
    let provenance = browser.text(&format!("{row} details")).await;
    assert!(provenance.contains("nodes/node-1 (values)"), "{provenance}");
    assert!(provenance.contains("token:alice"), "{provenance}");
    let size = browser
        .text("section[data-resource=globals] tr[data-key=size] summary")
        .await;
    assert!(size.contains("the root"), "{size}");
    browser.click(&format!("{row} details a")).await;
    browser.ready("doc").await;
    assert!(browser.text("#content").await.contains("colour: blue"));
    browser.close().await;
}

#[tokio::test]
async fn the_dry_run_preview_names_the_nodes_that_change() {
    let console = Console::start("");
    nodes(&console);
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser
        .page("#/edit?env=2&resource=globals&kind=values", "edit")
        .await;
    // `size` reaches both nodes; `colour` only node-2 (node-1 overrides it).
    browser
        .set_text(
            "textarea",
            &json!({"colour": "green", "size": 1}).to_string(),
        )
        .await;
    browser.click("#preview").await;
    let preview = browser.wait("#dry-run").await.text().await.unwrap();
    assert!(preview.contains("1 node(s) would change"), "{preview}");
    assert_eq!(browser.count("#dry-run li.node[data-node=node-2]").await, 1);
    assert_eq!(browser.count("#dry-run li.node[data-node=node-1]").await, 0);
    let (_, stored) = console.api(
        &console.tokens.read,
        "GET",
        &format!("{ENV}/2/resources/globals/values"),
        None,
    );
    assert!(stored.contains("red"), "a preview writes nothing: {stored}");
    browser.check_and_shoot("dry-run").await;
    browser.close().await;
}

#[tokio::test]
async fn the_change_feed_shows_a_new_change_live() {
    let console = Console::start("");
    nodes(&console);
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.page("#/changes", "changes").await;
    browser.wait("#feed-status").await;
    let before = browser.count("#feed li").await;
    let node = format!("{ENV}/2/nodes/node-2/resources/globals/values");
    assert_eq!(
        console
            .api(
                &console.tokens.write,
                "PUT",
                &node,
                Some(json!({"size": 9}))
            )
            .0,
        204
    );
    browser
        .wait(&format!("#feed li:nth-child({})", before + 1))
        .await;
    assert!(
        browser
            .text("#feed li:first-child")
            .await
            .contains("nodes/node-2")
    );
    browser.close().await;
}
