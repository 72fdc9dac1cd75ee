#!/usr/bin/env ruby
# Where a large lookup's time goes in the shim, step by step (run on
# demand, not a test): the Hiera 3 hierad backend looks up the Fuel
# answers of 10 KB and more, then each step of such a lookup is timed on
# its own, in turns, in one Ruby: building the request, the HTTP round trip
# (write, the server, reading the answer), the search for tags that
# X-Hierad-Tagged spares, and the parse by the json library.
#
#   cargo build --release
#   ruby hiera/bench/steps.rb [--hierad target/release/hierad] [--samples 2000] [--lib hiera/lib]
require 'json'
require 'yaml'
require 'optparse'
require 'tmpdir'
require 'fileutils'
require_relative 'server'

REPO = File.expand_path('../..', __dir__)
FIXTURE = File.join(REPO, 'tests/fixtures/hiera/fuel')
options = { lib: File.join(REPO, 'hiera/lib'), hierad: File.join(REPO, 'target/release/hierad'), samples: 2000 }
OptionParser.new do |o|
  o.on('--hierad PATH', 'the hierad binary (default target/release/hierad)') { |v| options[:hierad] = v }
  o.on('--samples N', Integer, 'timed lookups of each step (default 2000)') { |v| options[:samples] = v }
  o.on('--lib DIR', "the shim's lib directory (default hiera/lib)") { |v| options[:lib] = File.expand_path(v) }
end.parse!
$LOAD_PATH.unshift(options[:lib])
require 'hiera'
require 'hiera/backend/hierad_backend'

tmp = Dir.mktmpdir('hierad-steps')
url = BenchServer.start(options[:hierad], tmp, 'steps')

client = PuppetX::Hierad::Client.new(url: url)
client.post('/api/v1/config/components', JSON.generate('name' => 'bench', 'resource_definitions' => []))
client.post('/api/v1/config/environments', JSON.generate('id' => 901, 'components' => ['bench'], 'hierarchy_levels' => ['datadir']))
nodes = Dir.children(File.join(FIXTURE, 'nodes')).sort
nodes.each do |node|
  system(options[:hierad], 'import', File.join(FIXTURE, 'nodes', node), '--env', '901', '--level', "datadir=#{node}",
         '--replace', '--server', url, out: File::NULL) or abort 'steps: hierad import failed'
end
base = YAML.load_file(File.join(FIXTURE, 'hiera.yaml'))
Hiera::Config.load(base.merge(logger: 'noop', backends: ['hierad'],
                              hierad: { url: url, environment: 901, level: 'datadir=%{::fqdn}' }))
big = nodes.flat_map do |node|
  scope = JSON.parse(File.read(File.join(FIXTURE, "scope-#{node}.json")))
  YAML.load_file(File.join(FIXTURE, 'nodes', node, 'astute.yaml'))
      .select { |_, v| JSON.generate(v).bytesize >= 10 * 1024 }.keys.map { |key| [scope, key] }
end

backend = Hiera::Backend::Hierad_backend.new
prepared = backend.send(:prepare)
clock = Process::CLOCK_MONOTONIC
now = -> { Process.clock_gettime(clock) }
samples = Hash.new { |h, k| h[k] = [] }
bytes = 0
tagged = nil
(options[:samples] + 50).times do |i|
  scope, key = big[i % big.size]
  t0 = now.call
  Hiera::Backend.lookup(key, nil, scope, nil, :priority)
  t1 = now.call
  level = backend.send(:expand, prepared.level, scope, nil)
  head, tail = backend.send(:request_body, prepared, '901', level, key, scope, nil, nil)
  body = head + Hiera::Backend::Hierad_backend.registered(prepared, nil) + tail
  t2 = now.call
  response = prepared.client.post('/api/v1/lookup', body)
  t3 = now.call
  response.body.include?(PuppetX::Hierad::Wire::TAG_JSON)
  t4 = now.call
  JSON.parse(response.body, max_nesting: false)
  t5 = now.call
  next if i < 50 # warm-up: keep-alive connection, server cache

  bytes = response.body.bytesize
  tagged = response.headers['x-hierad-tagged']
  samples['whole lookup (Hiera::Backend.lookup)'] << t1 - t0
  samples['request body'] << t2 - t1
  samples['HTTP round trip'] << t3 - t2
  samples['search for tags'] << t4 - t3
  samples['parse, json library'] << t5 - t4
end
puts "#{big.size} answers >= 10 KB (#{big.map(&:last).uniq.join(', ')}, #{bytes} bytes), #{options[:samples]} samples each, " \
     "X-Hierad-Tagged: #{tagged.inspect}, Ruby #{RUBY_VERSION}"
samples.each do |name, list|
  list.sort!
  puts format('  %-50s median %8.1f µs   p90 %8.1f µs', name, list[list.size / 2] * 1e6, list[list.size * 9 / 10] * 1e6)
end
