//! The node page of a Fuel node (the 17 datasources of Fuel's
//! hierarchy, every resource), rendered in chromium over loopback:
//! `cargo test --test ui bench:: -- --ignored --nocapture` prints the
//! figures, against the same data fetched without a browser in the
//! same run.

use crate::browser::{Browser, Console};
use serde_json::json;
use std::time::Instant;

/// How many times each page is timed; the median is printed.
const RUNS: usize = 7;

fn median(mut figures: Vec<f64>) -> f64 {
    figures.sort_by(f64::total_cmp);
    figures[figures.len() / 2]
}

#[tokio::test]
#[ignore = "a benchmark: prints its figures (-- --ignored --nocapture)"]
async fn node_page_of_a_fuel_node() {
    let dir = tempfile::tempdir().unwrap();
    let tree = dir.path().join("fuel");
    let db = dir.path().join("hierad.db");
    crate::binary::ok(&format!("bench generate --nodes 3 {}", tree.display()));
    crate::binary::ok(&format!(
        "bench load --db {} --env 7 {}",
        db.display(),
        tree.display()
    ));
    let console = Console::start_on(&db);
    let token = console.tokens.read.clone();
    let envs = console
        .api(&token, "GET", "/api/v1/config/components", None)
        .1;
    let resources: Vec<String> = serde_json::from_str::<serde_json::Value>(&envs)
        .unwrap()
        .as_array()
        .unwrap()
        .iter()
        .flat_map(|c| c["resource_definitions"].as_array().unwrap().clone())
        .map(|d| d["name"].as_str().unwrap().to_owned())
        .collect();
    let node = "node-1.test.domain.local";
    let level = format!("nodes/{node}");
    // The baseline: the page's API requests, one after another, by a
    // client that renders nothing.
    let mut api = Vec::new();
    for _ in 0..RUNS {
        let start = Instant::now();
        for r in &resources {
            let path = format!(
                "/api/v1/config/environments/7/{level}/resources/{r}/values?effective&show_lookup"
            );
            assert_eq!(console.api(&token, "GET", &path, None).0, 200);
        }
        api.push(start.elapsed().as_secs_f64() * 1000.0);
    }
    let browser = Browser::open(&console.server.url).await;
    browser.sign_in(&token).await;
    let hash = format!("#/node?env=7&node={node}&level={level}");
    let mut page = Vec::new();
    for _ in 0..RUNS {
        browser.page("#/lookup", "lookup").await;
        let ms = browser
            .client
            .execute_async(
                "const [hash, done] = arguments; const t0 = performance.now(); location.hash = hash; \
                 const check = () => document.body.dataset.ready === 'node' \
                   ? done(performance.now() - t0) : setTimeout(check, 1); check();",
                vec![json!(hash)],
            )
            .await
            .unwrap();
        page.push(ms.as_f64().unwrap());
    }
    browser.check_and_shoot("node-fuel").await;
    let (page, api) = (median(page), median(api));
    println!(
        "node page, Fuel node ({} resources, 17-level hierarchy): rendered in {page:.1} ms (median of {RUNS}); \
         its {} API requests alone: {api:.1} ms; ratio {:.2}",
        resources.len(),
        resources.len(),
        page / api
    );
    browser.close().await;
}
