//! The console's pages in chromium, against routes that exist today.

use crate::browser::{Browser, Console};
use serde_json::json;

/// The document the tests edit: the sample's root `globals` values.
const DOC: &str = "/api/v1/config/environments/1/resources/globals/values";
const DOC_PAGE: &str = "#/doc?env=1&resource=globals&kind=values";
const EDIT_PAGE: &str = "#/edit?env=1&resource=globals&kind=values";
/// The WebDriver key code of Enter (https://www.w3.org/TR/webdriver2/#keyboard-actions).
const ENTER: &str = "\u{E007}";

/// A short document, so diffs and edits name their lines exactly.
fn small(colour: &str) -> serde_json::Value {
    json!({"region": "north", "colour": colour, "replicas": 3})
}

#[tokio::test]
async fn every_page_loads_with_no_console_error_and_nothing_from_elsewhere() {
    let console = Console::start("");
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.check_and_shoot("environments").await;
    let envs = browser.text("main").await;
    assert!(
        envs.contains("Environment 1") && envs.contains("globals"),
        "{envs}"
    );
    // From the keyboard: Enter on the link of globals' values.
    let link = browser.wait(&format!("a[href=\"{DOC_PAGE}\"]")).await;
    link.send_keys(ENTER).await.unwrap();
    browser.ready("doc").await;
    browser.wait("#history tbody tr").await;
    browser.check_and_shoot("document").await;
    browser.page(EDIT_PAGE, "edit").await;
    browser.check_and_shoot("edit").await;
    browser
        .page("#/lookup?env=1&key=nova&resolution=hash", "lookup")
        .await;
    browser.wait("#answer section").await;
    // The explain, level by level: each datasource the walk read.
    browser.wait("#explain tbody tr").await;
    assert!(browser.count("#explain tbody tr").await > 1);
    browser.check_and_shoot("lookup").await;
    browser.close().await;
}

#[tokio::test]
async fn a_diff_shows_the_added_and_removed_lines() {
    let console = Console::start("");
    let token = &console.tokens.write;
    assert_eq!(console.api(token, "PUT", DOC, Some(small("red"))).0, 204);
    assert_eq!(console.api(token, "PUT", DOC, Some(small("blue"))).0, 204);
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(token).await;
    browser.page(DOC_PAGE, "doc").await;
    // The newest two versions, picked as a person would, by keyboard-
    // reachable radio buttons.
    let rows = browser.count("#history tbody tr").await;
    assert!(rows >= 2, "{rows} versions");
    browser
        .click("#history tbody tr:nth-child(2) input[name=from]")
        .await;
    browser
        .click("#history tbody tr:nth-child(1) input[name=to]")
        .await;
    browser.click("#compare").await;
    browser.wait(".diff li.added").await;
    assert_eq!(browser.text(".diff li.removed").await, "colour: red");
    assert_eq!(browser.text(".diff li.added").await, "colour: blue");
    assert_eq!(browser.count(".diff li.added").await, 1);
    assert_eq!(browser.count(".diff li.removed").await, 1);
    browser.check_and_shoot("diff").await;
    browser.close().await;
}

#[tokio::test]
async fn an_edit_saves_and_appears_in_history_with_its_author() {
    let console = Console::start("");
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.page(EDIT_PAGE, "edit").await;
    browser
        .set_text("textarea", &small("green").to_string())
        .await;
    // The save is the console's own PUT from the browser: its Origin and
    // JSON body pass the server's cross-site refusals.
    browser.click("#save").await;
    let saved = browser.wait("#outcome .ok").await.text().await.unwrap();
    assert!(saved.starts_with("Saved as version"), "{saved}");
    browser.page(DOC_PAGE, "doc").await;
    let newest = browser.text("#history tbody tr:first-child .author").await;
    assert_eq!(newest, "token:alice");
    assert!(browser.text("#content").await.contains("colour: green"));
    let (_, stored) = console.api(&console.tokens.read, "GET", DOC, None);
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&stored).unwrap(),
        small("green")
    );
    browser.close().await;
}

#[tokio::test]
async fn a_conflicting_edit_is_shown_as_a_conflict_keeping_the_text() {
    let console = Console::start("");
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.page(EDIT_PAGE, "edit").await;
    // Someone else saves after the page was opened.
    let (status, _) = console.api(&console.tokens.admin, "PUT", DOC, Some(small("theirs")));
    assert_eq!(status, 204);
    let mine = small("mine").to_string();
    browser.set_text("textarea", &mine).await;
    browser.click("#save").await;
    let conflict = browser.wait("#conflict").await.text().await.unwrap();
    assert!(
        conflict.contains("Conflict: nothing was saved"),
        "{conflict}"
    );
    assert!(conflict.contains("token:root"), "{conflict}");
    let kept = browser
        .client
        .execute("return document.querySelector('textarea').value", vec![])
        .await
        .unwrap();
    assert_eq!(kept, json!(mine), "the user's text is kept");
    let (_, stored) = console.api(&console.tokens.read, "GET", DOC, None);
    assert!(stored.contains("theirs"), "nothing was written: {stored}");
    browser.check_and_shoot_after("conflict", Some(412)).await;
    browser.close().await;
}

#[tokio::test]
async fn a_schema_error_is_shown_at_its_field() {
    let console = Console::start("");
    let schema = json!({"schema": {"type": "object", "properties": {
        "replicas": {"type": "integer"}}}});
    let definition = "/api/v1/config/components/fuel/resource_definitions/globals";
    let (status, body) = console.api(&console.tokens.admin, "PUT", definition, Some(schema));
    assert_eq!(status, 200, "{body}");
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.write).await;
    browser.page(EDIT_PAGE, "edit").await;
    let wrong = json!({"region": "north", "replicas": "three"}).to_string();
    browser.set_text("textarea", &wrong).await;
    browser.click("#save").await;
    let at = browser
        .wait("li[data-pointer=\"/replicas\"] .field-error")
        .await;
    let problem = at.text().await.unwrap();
    assert!(problem.contains("not of type \"integer\""), "{problem}");
    assert_eq!(browser.count(".field-error").await, 1, "only at its field");
    browser
        .check_and_shoot_after("schema-error", Some(400))
        .await;
    browser.close().await;
}

#[tokio::test]
async fn a_read_token_sees_no_edit_control_and_its_forged_put_is_refused() {
    let console = Console::start("");
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&console.tokens.read).await;
    browser.page(DOC_PAGE, "doc").await;
    browser.wait("#history tbody tr").await;
    let main = browser.text("main").await;
    assert!(!main.contains("Edit"), "{main}");
    assert_eq!(browser.count("button[aria-label^=Restore]").await, 0);
    // The edit page, reached by its address, offers nothing to save.
    browser.page(EDIT_PAGE, "edit").await;
    assert_eq!(browser.count("textarea").await, 0);
    assert_eq!(browser.count("#save").await, 0);
    assert!(browser.text("main").await.contains("Your role (read)"));
    // A write forged from the page itself, with the reader's token.
    let status = browser
        .client
        .execute_async(
            "const done = arguments[arguments.length - 1]; \
             fetch(arguments[0], {method: 'PUT', headers: {'Content-Type': 'application/json', \
             Authorization: 'Bearer ' + sessionStorage.getItem('hierad.token')}, body: '{}'}) \
             .then(r => done(r.status));",
            vec![json!(DOC)],
        )
        .await
        .unwrap();
    assert_eq!(status, json!(403));
    browser.check_and_shoot_after("read-only", Some(403)).await;
    browser.close().await;
}
