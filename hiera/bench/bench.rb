#!/usr/bin/env ruby
# Benchmark of the shim, run on demand (not a test): in one Ruby process,
# the Hiera 3 hierad backend and the Hiera 3 yaml backend answer the same
# keys of Fuel nodes (priority lookups, every top-level key), and the
# script prints medians, p99 and their ratios, for all answers and for
# answers of 10 KB and more. It also counts the HTTP requests of a
# `puppet lookup` of many keys through the Hiera 5 functions.
#
#   cargo build --release
#   ruby hiera/bench/bench.rb [--hierad target/release/hierad] [--rounds 30] [--big-samples 2000]
#                             [--fixture tests/fixtures/hiera/fuel]
#                             [--fuel-files tests/fixtures/fuel]
#                             [--node FQDN]... [--keys 60]
#                             [--cli 20] [--no-puppet] [--lib hiera/lib]
#
# It starts `hierad serve` on 127.0.0.1:0 with a temporary database, loads
# each node's tree with `hierad import`, and stops the server at the end.
# Targets (the issue): hierad <= 0.5x the yaml backend at the median and at
# p99, >= 5x faster for answers of 10 KB and more; the requests of one
# compile grow with the hierarchy levels, not with the keys.
require 'json'
require 'yaml'
require 'optparse'
require 'tmpdir'
require 'fileutils'
require_relative 'server'

REPO = File.expand_path('../..', __dir__)

options = {
  lib: File.join(REPO, 'hiera/lib'),
  hierad: [File.join(REPO, 'target/release/hierad'), File.join(REPO, 'target/debug/hierad')].find { |p| File.executable?(p) },
  rounds: 30,
  big_samples: 2000,
  fixture: File.join(REPO, 'tests/fixtures/hiera/fuel'),
  nodes: [],
  keys: 60,
  cli: 20,
  puppet: system('command -v puppet >/dev/null 2>&1')
}
OptionParser.new do |o|
  o.on('--hierad PATH', 'the hierad binary (default: target/release, else target/debug)') { |v| options[:hierad] = v }
  o.on('--rounds N', Integer, 'lookups of every key per backend (default 30)') { |v| options[:rounds] = v }
  o.on('--big-samples N', Integer, 'timed lookups of answers >= 10 KB per backend, after (default 2000)') do |v|
    options[:big_samples] = v
  end
  o.on('--fixture DIR', 'a Fuel tree: hiera.yaml, nodes/FQDN/, scope-FQDN.json') { |v| options[:fixture] = v }
  o.on('--fuel-files DIR', 'instead: one node per astute.yaml in DIR (e.g. tests/fixtures/fuel),',
       'under the Fuel tree\'s hiera.yaml and globals.yaml') { |v| options[:fuel_files] = v }
  o.on('--node FQDN', 'a node to look up (repeatable; default: every node of the fixture)') { |v| options[:nodes] << v }
  o.on('--keys N', Integer, 'keys of the many-key puppet lookup (default 60)') { |v| options[:keys] = v }
  o.on('--cli N', Integer, 'runs of the hiera command per backend (default 20; 0: none)') { |v| options[:cli] = v }
  o.on('--no-puppet', 'skip the puppet request count') { options[:puppet] = false }
  o.on('--lib DIR', "the shim's lib directory (default hiera/lib; another checkout's to compare versions)") do |v|
    options[:lib] = File.expand_path(v)
  end
end.parse!
$LOAD_PATH.unshift(options[:lib])
require 'hiera'
require 'hiera/backend/yaml_backend'
require 'hiera/backend/hierad_backend'
abort 'bench: no hierad binary; run cargo build --release or pass --hierad' unless options[:hierad]

ENV_ID = 901
# Each node's tree at its own level value, selected by the scope.
LEVEL = 'datadir=%{::fqdn}'.freeze
BIG = 10 * 1024
tmp = Dir.mktmpdir('hierad-bench')
if options[:fuel_files]
  # A Fuel tree with one node per file, as tests/oracle/shim/fuel.rs builds it.
  tree = File.join(tmp, 'fuel-files')
  Dir.glob(File.join(options[:fuel_files], '*.yaml')).sort.each do |file|
    name = File.basename(file, '.yaml')
    FileUtils.mkdir_p(File.join(tree, 'nodes', name))
    FileUtils.cp(file, File.join(tree, 'nodes', name, 'astute.yaml'))
    FileUtils.cp(File.join(options[:fixture], 'globals.yaml'), File.join(tree, 'nodes', name))
    File.write(File.join(tree, "scope-#{name}.json"), JSON.generate('::fqdn' => name, 'fqdn' => name))
  end
  FileUtils.cp(File.join(options[:fixture], 'hiera.yaml'), tree)
  options[:fixture] = tree
end
if options[:nodes].empty?
  options[:nodes] = Dir.children(File.join(options[:fixture], 'nodes')).sort
end

def post_json(url, path, body)
  client = PuppetX::Hierad::Client.new(url: url)
  response = client.post(path, JSON.generate(body))
  raise "POST #{path}: #{response.status} #{response.body}" unless response.status < 300 || response.status == 409

  response
end

def metric(url, route, method)
  text = PuppetX::Hierad::Client.new(url: url).get('/metrics').body
  prefix = "hierad_http_requests_total{method=\"#{method}\",route=\"#{route}\","
  text.lines.select { |l| l.start_with?(prefix) }.sum { |l| l.split.last.to_i }
end

# The server's own time answering lookups so far (its latency histogram):
# seconds, count.
def server_time(url)
  text = PuppetX::Hierad::Client.new(url: url).get('/metrics').body
  at = ->(what) { text[/^hierad_http_request_duration_seconds_#{what}\{method="POST",route="\/api\/v1\/lookup"\} (\S+)$/, 1].to_f }
  [at.call('sum'), at.call('count')]
end

# nil unless ten samples or more lie beyond it: a p99 of a few hundred
# samples would be one of the largest few, not a percentile.
def percentile(sorted, q)
  return nil if sorted.size * (1 - q) < 10

  sorted[(q * sorted.size).ceil - 1]
end

def us(seconds)
  seconds ? format('%8.1f µs', seconds * 1e6) : '     (too few samples)'
end

def ratio(a, b)
  return 'n/a' unless a && b

  "#{format('%.2f', a / b)}x (yaml #{format('%.1f', b / a)}x slower)"
end

# The server.
url = BenchServer.start(options[:hierad], tmp, 'bench')

post_json(url, '/api/v1/config/components', 'name' => 'bench', 'resource_definitions' => [])
post_json(url, '/api/v1/config/environments', 'id' => ENV_ID, 'components' => ['bench'], 'hierarchy_levels' => ['datadir'])
options[:nodes].each do |node|
  system(options[:hierad], 'import', File.join(options[:fixture], 'nodes', node), '--env', ENV_ID.to_s,
         '--level', "datadir=#{node}", '--replace', '--server', url, out: File::NULL) or abort 'bench: hierad import failed'
end

# The two Hiera configurations over the same files.
base = YAML.load_file(File.join(options[:fixture], 'hiera.yaml'))
yaml_config = base.merge(logger: 'noop', yaml: { datadir: File.join(options[:fixture], 'nodes/%{::fqdn}') })
hierad_config = base.merge(logger: 'noop', backends: ['hierad'],
                           hierad: { url: url, environment: ENV_ID, level: LEVEL })
# The lookups: (scope, key) for every top-level key of every node.
lookups = options[:nodes].flat_map do |node|
  scope = JSON.parse(File.read(File.join(options[:fixture], "scope-#{node}.json")))
  Dir.glob(File.join(options[:fixture], 'nodes', node, '**', '*.yaml')).sort.flat_map do |f|
    data = YAML.load_file(f)
    data.is_a?(Hash) ? data.keys.grep(String) : []
  end.uniq.map { |key| [scope, key] }
end

hieras = { 'yaml' => yaml_config, 'hierad' => hierad_config }

# Same answers first: a benchmark of different work would be meaningless.
# Lookups Hiera fails (a dotted key into a String) are left out of it.
outcome = lambda do |config, scope, key|
  Hiera::Config.load(config)
  [:value, Hiera::Backend.lookup(key, nil, scope, nil, :priority)]
rescue Exception => e # rubocop:disable Lint/RescueException -- Hiera raises Exception itself
  [:error, "#{e.class}: #{e.message}"]
end
failing = 0
sizes = []
lookups = lookups.select do |scope, key|
  a = outcome.call(yaml_config, scope, key)
  b = outcome.call(hierad_config, scope, key)
  abort "bench: #{key} differs between the backends: #{a.inspect[0, 200]} / #{b.inspect[0, 200]}" unless a.inspect == b.inspect
  failing += 1 if a[0] == :error
  next false if a[0] == :error

  sizes << (JSON.generate(a[1]).bytesize rescue a[1].inspect.bytesize)
end
Hiera::Config.load(hierad_config)
before = metric(url, '/api/v1/lookup', 'POST')
server_before = server_time(url)

# Times every lookup `rounds` times per backend, the backends taking turns
# (first in even rounds); two warm-up rounds first (file cache, keep-alive
# connection, server cache). Returns the samples per backend.
def measure(hieras, lookups, rounds)
  samples = { 'yaml' => [], 'hierad' => [] }
  clock = Process::CLOCK_MONOTONIC
  (rounds + 2).times do |round|
    order = round.even? ? %w[yaml hierad] : %w[hierad yaml]
    order.each do |name|
      Hiera::Config.load(hieras.fetch(name))
      GC.start
      lookups.each do |scope, key|
        t0 = Process.clock_gettime(clock)
        Hiera::Backend.lookup(key, nil, scope, nil, :priority)
        dt = Process.clock_gettime(clock) - t0
        samples[name] << dt if round >= 2
      end
    end
  end
  samples
end

samples = measure(hieras, lookups, options[:rounds])
requests = metric(url, '/api/v1/lookup', 'POST') - before
server_seconds, server_count = server_time(url).zip(server_before).map { |a, b| a - b }

puts "hierad bench: #{lookups.size} keys of #{options[:nodes].join(', ')} (#{sizes.count { |s| s >= BIG }} answers >= 10 KB; " \
     "#{failing} keys Hiera fails left out), " \
     "#{options[:rounds]} rounds, priority lookups, Ruby #{RUBY_VERSION}, #{options[:hierad]}"
# The large answers again, many more times: they are a few of the keys, so
# their p99 needs rounds of their own.
big_lookups = lookups.select.with_index { |_, i| sizes[i] >= BIG }
big = measure(hieras, big_lookups, (options[:big_samples].to_f / big_lookups.size).ceil) unless big_lookups.empty?

puts "HTTP requests per hierad lookup: #{format('%.2f', requests.to_f / (lookups.size * (options[:rounds] + 2)))}"
mean = samples['hierad'].sum / samples['hierad'].size
server_mean = server_seconds / server_count
puts "hierad lookup, mean: #{us(mean).strip}, of which the server's own time #{us(server_mean).strip} " \
     "(#{format('%.0f', 100 * server_mean / mean)}%; the rest is Ruby, the kernel and the loopback)"
[['all answers', samples], ['answers >= 10 KB', big || {}]].each do |title, set|
  next if set.empty?

  y = set['yaml'].sort
  h = set['hierad'].sort

  puts "#{title} (#{y.size} lookups each):"
  puts "  yaml backend    median #{us(percentile(y, 0.5))}   p99 #{us(percentile(y, 0.99))}"
  puts "  hierad backend  median #{us(percentile(h, 0.5))}   p99 #{us(percentile(h, 0.99))}"
  puts "  hierad / yaml   median #{ratio(percentile(h, 0.5), percentile(y, 0.5))}   " \
       "p99 #{ratio(percentile(h, 0.99), percentile(y, 0.99))}"
end

# One `hiera` command per lookup, the backends taking turns: a fresh Ruby
# each time, so loading the shim counts, as it does for a one-shot `hiera`.
if options[:cli].positive?
  scope, key = lookups.first
  File.write(File.join(tmp, 'scope.json'), JSON.generate(scope))
  times = { 'yaml' => [], 'hierad' => [] }
  options[:cli].times do |i|
    (i.even? ? %w[yaml hierad] : %w[hierad yaml]).each do |name|
      config = File.join(tmp, "hiera-#{name}.yaml")
      File.write(config, YAML.dump(hieras.fetch(name)))
      t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
      system({ 'RUBYLIB' => options[:lib] }, 'hiera', '-c', config, '-j', File.join(tmp, 'scope.json'), key,
             out: File::NULL) or abort "bench: hiera -c #{config} #{key} failed"
      times[name] << Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    end
  end
  y = times['yaml'].sort
  h = times['hierad'].sort
  puts "the hiera command, one lookup of #{key} (#{y.size} runs each, median): yaml #{format('%.1f', y[y.size / 2] * 1e3)} ms, " \
       "hierad #{format('%.1f', h[h.size / 2] * 1e3)} ms"
end

exit unless options[:puppet]

# The requests (and the time) of one `puppet lookup` of many keys through
# the Hiera 5 functions: one per hierarchy location with either function
# (hierad::lookup_key answers a location's keys from its whole datasource).
levels = base[:hierarchy].map { |l| l.gsub('%{disable_globals_yaml}', '').gsub('%{::fqdn}', '%{trusted.certname}') }
levels.reject! { |l| l.include?('calling_') }
envs = File.join(tmp, 'envs')
node = options[:nodes].first
{ 'datahash' => 'data_hash: hierad::data_hash', 'lookupkey' => 'lookup_key: hierad::lookup_key' }.each do |env, backend|
  dir = File.join(envs, env)
  # A copy, not a link into the checkout: nothing Puppet writes can land there.
  FileUtils.mkdir_p(File.join(dir, 'modules', 'hierad'))
  FileUtils.cp_r(options[:lib], File.join(dir, 'modules', 'hierad', 'lib'))
  FileUtils.cp(File.join(REPO, 'hiera/metadata.json'), File.join(dir, 'modules', 'hierad'))
  File.write(File.join(dir, 'hiera.yaml'), <<~YAML)
    version: 5
    hierarchy:
      - name: hierad
        #{backend}
        uris: #{JSON.generate(levels)}
        options: #{JSON.generate('url' => url, 'environment' => ENV_ID, 'level' => "datadir=#{node}")}
  YAML
end
facts = File.join(tmp, 'facts.json')
host, domain = node.split('.', 2)
File.write(facts, JSON.generate('fqdn' => node, 'hostname' => host, 'domain' => domain, 'clientcert' => node))
many = Array.new(options[:keys] - 1) { |i| "missing_key_#{i}" } + ['fqdn']
puts "HTTP requests of one puppet lookup for #{node} (#{levels.size} hierarchy levels; #{options[:keys] - 1} missing keys, then fqdn):"
# Both routes, for shims from before lookup_key read whole datasources.
routes = ['/api/v1/data/{env}/{*resource}', '/api/v1/config/environments/{env}/{*rest}']
%w[datahash lookupkey].each do |env|
  [['fqdn'], many].each do |ks|
    n0 = routes.sum { |route| metric(url, route, 'GET') }
    t0 = Process.clock_gettime(Process::CLOCK_MONOTONIC)
    out = IO.popen(['puppet', 'lookup', '--confdir', File.join(tmp, 'conf'), '--vardir', File.join(tmp, 'var'),
                    '--codedir', File.join(tmp, 'code'), '--environmentpath', envs, '--environment', env,
                    '--node', node, '--facts', facts, '--render-as', 'json', *ks], err: File::NULL, &:read)
    took = Process.clock_gettime(Process::CLOCK_MONOTONIC) - t0
    n = routes.sum { |route| metric(url, route, 'GET') } - n0
    fn = env == 'datahash' ? 'hierad::data_hash' : 'hierad::lookup_key'
    puts "  #{fn.ljust(18)} #{ks.size.to_s.rjust(3)} key(s): #{n.to_s.rjust(5)} requests, #{format('%.1f', took)} s (answer #{out.strip[0, 40]})"
  end
end
