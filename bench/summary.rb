# The table of bench/run.sh: each figure with its baseline, the ratio
# (taken within each round, then the median across rounds) and the target.
#   ruby bench/summary.rb RESULTS_DIR
require 'json'

dir = ARGV.fetch(0)
def load(path) = JSON.parse(File.read(path))
def median(xs)
  s = xs.compact.sort
  return nil if s.empty?
  s.size.odd? ? s[s.size / 2] : (s[s.size / 2 - 1] + s[s.size / 2]) / 2.0
end

rounds = Dir[File.join(dir, 'baseline-r*.json')].map { |f| f[/-r(\d+)\.json$/, 1].to_i }.sort
run = ->(name, r) { load(File.join(dir, "#{name}-r#{r}.json")) }
rps = ->(name) { rounds.map { |r| run.(name, r)['lookups_per_s'] } }
p99 = ->(name) { rounds.map { |r| run.(name, r)['latency_us']['p99'] / 1000.0 } }
per_round = lambda do |a, b, &f|
  rounds.map { |r| f.(run.(a, r)) / f.(run.(b, r)).to_f }
end
spread = ->(xs) { xs.compact.empty? ? '' : format('(%s)', xs.compact.minmax.map { |x| fmt(x) }.join('..')) }
def fmt(x) = x.is_a?(Float) && x.abs < 10 ? format('%.2f', x) : format('%.0f', x)
cache = ->(name) { median(rounds.map { |r| run.(name, r).dig('cache', 'hit_ratio') }) }

rows = []
row = ->(figure, value, baseline, ratio, target, ok) { rows << [figure, value, baseline, ratio, target, ok.nil? ? '' : (ok ? 'met' : 'MISSED')] }

rps_of = ->(r) { r['lookups_per_s'] }
p99_of = ->(r) { r['latency_us']['p99'] }
t = per_round.('hierad-big', 'baseline', &rps_of)
row.("1. throughput, #{rounds.size} rounds", "#{fmt(median(rps.('hierad-big')))}/s (cache #{format('%.0f', 100 * (cache.('hierad-big') || 0))}% hits)",
     "bare hyper #{fmt(median(rps.('baseline')))}/s", "#{fmt(median(t))} #{spread.(t)}", '>= 0.70', median(t) >= 0.70)
row.('   p99 latency', "#{fmt(median(p99.('hierad-big')))} ms", "bare hyper #{fmt(median(p99.('baseline')))} ms",
     fmt(median(per_round.('hierad-big', 'baseline', &p99_of))), '<= 5 ms', median(p99.('hierad-big')) <= 5)
u = per_round.('hierad-unique', 'baseline', &rps_of)
row.('   every lookup a cache miss', "#{fmt(median(rps.('hierad-unique')))}/s, p99 #{fmt(median(p99.('hierad-unique')))} ms",
     "bare hyper", "#{fmt(median(u))} #{spread.(u)}", '(no target)', nil)
l = per_round.('large', 'baseline', &rps_of)
row.('2. large answers (55 KB hash)', "#{fmt(median(rps.('large')))}/s (cache #{format('%.0f', 100 * (cache.('large') || 0))}% hits), p99 #{fmt(median(p99.('large')))} ms",
     'bare hyper', "#{fmt(median(l))} #{spread.(l)}", '>= 10,000/s', median(rps.('large')) >= 10_000)
lu = per_round.('large-unique', 'baseline', &rps_of)
row.('   every one a full lookup', "#{fmt(median(rps.('large-unique')))}/s, p99 #{fmt(median(p99.('large-unique')))} ms",
     'bare hyper', "#{fmt(median(lu))} #{spread.(lu)}", '(no target)', nil)
h = per_round.('hierad-small', 'baseline', &rps_of)
row.('   answer cache hot (10 nodes)', "#{fmt(median(rps.('hierad-small')))}/s (cache #{format('%.0f', 100 * (cache.('hierad-small') || 0))}% hits), p99 #{fmt(median(p99.('hierad-small')))} ms",
     'bare hyper', "#{fmt(median(h))} #{spread.(h)}", '(no target)', nil)
big_nodes = load(File.join(dir, 'import-big.json'))['levels'] - 1
small_nodes = load(File.join(dir, 'import-small.json'))['levels'] - 1
s = per_round.('hierad-unique', 'hierad-small-unique', &rps_of)
row.("3. scale: #{big_nodes} nodes vs #{small_nodes}, full lookups",
     "#{fmt(median(rps.('hierad-unique')))}/s", "#{fmt(median(rps.('hierad-small-unique')))}/s", "#{fmt(median(s))} #{spread.(s)}", '>= 0.80', median(s) >= 0.8)
m = per_round.('hierad-big', 'hierad-small', &rps_of)
row.('   same, the mix (cache included)', "#{fmt(median(rps.('hierad-big')))}/s", "#{fmt(median(rps.('hierad-small')))}/s", "#{fmt(median(m))} #{spread.(m)}", '(no target)', nil)
mem = load(File.join(dir, 'memory.json'))
gib = 1024.0**3
row.('   server RSS', format('%.0f MiB (peak %.0f MiB)', mem['rss_bytes'] / 1024.0**2, mem['peak_rss_bytes'] / 1024.0**2), '1 GiB',
     fmt(mem['peak_rss_bytes'] / gib), '<= 1 GiB', mem['peak_rss_bytes'] <= gib)
st = load(File.join(dir, 'startup.json'))['startup_s']
row.('   start-up to first answer', format('%.2f s', st), '2 s', fmt(st / 2.0), '<= 2 s', st <= 2.0)
imp = load(File.join(dir, 'import-big.json'))
row.('   import through the API', format('%.1f s: %.0f docs/s, %.1f nodes/s, %.1f MB/s', imp['seconds'], imp['documents_per_s'], imp['levels_per_s'], imp['mb_per_s']),
     '', '', '(reported)', nil)
w = per_round.('writes', 'idle', &p99_of)
writes = median(rounds.map { |r| run.('writes', r).dig('writes', 'count') })
row.('4. p99 while writing', "#{fmt(median(p99.('writes')))} ms (#{fmt(writes)} writes, cache #{format('%.0f', 100 * (cache.('writes') || 0))}% hits)",
     "idle #{fmt(median(p99.('idle')))} ms", "#{fmt(median(w))} #{spread.(w)}", '<= 1.5', median(w) <= 1.5)
vis = File.join(dir, 'visible.json')
if File.exist?(vis)
  v = load(vis)
  same = load(File.join(dir, 'visible-same.json'))
  ms = ->(us) { fmt(us / 1000.0) }
  row.("6. write to visible on another server (#{v['writes']} writes)", "p50 #{ms.(v['visible_p50_us'])} ms, p99 #{ms.(v['visible_p99_us'])} ms",
       "same server p99 #{ms.(same['visible_p99_us'])} ms", fmt(v['visible_p99_us'].to_f / same['visible_p99_us']), 'p99 < 50 ms', v['visible_p99_us'] < 50_000)
end
cli = File.join(dir, 'cli.txt')
if File.exist?(cli)
  File.readlines(cli).drop(1).each do |line|
    name, ours, theirs, x = line.split
    next unless x
    row.("5. lookup per call: #{name}", "#{ours} ms", "hiera #{theirs} ms", format('%.3f', ours.to_f / theirs.to_f), '(reported)', nil)
  end
end

widths = (0...6).map { |i| ([%w[figure hierad baseline ratio target verdict][i]] + rows.map { |r| r[i].to_s }).map(&:size).max }
puts [%w[figure hierad baseline ratio target verdict]].concat(rows).map { |r| r.each_with_index.map { |c, i| c.to_s.ljust(widths[i]) }.join('  ').rstrip }
