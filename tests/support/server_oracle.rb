# The real Hiera 3.10, in process, for tests/oracle/server_differential.rs: reads a
# JSON list of environments on stdin ({"env", "dir", "config", "scope",
# "keys_from"}), and for every String top-level key of the YAML files under
# "keys_from" (plus one missing key) prints one JSON line per resolution
# type: {"env", "key", "res", "ok": <tagged value>} or {..., "err": [class, msg]}.
require 'json'
require 'yaml'
require 'hiera'
require_relative 'tagged'
require 'stringio'

# deep_merge's merge_debug prints to $stdout: keep it out of the answers.
answers = $stdout
$stdout = StringIO.new

specs = JSON.parse($stdin.read)
out = []
specs.each do |spec|
  Dir.chdir(spec['dir']) do
    Hiera::Backend.clear!
    hiera = Hiera.new(config: spec['config'])
    Hiera.logger = 'noop'
    scope = spec['scope'] ? JSON.load(File.read(spec['scope'])) : {}
    keys = []
    Dir.glob(File.join(spec['keys_from'], '**', '*.yaml')).sort.each do |f|
      data = YAML.load(File.read(f, encoding: 'BOM|UTF-8')) rescue nil
      next unless data.is_a?(Hash)
      data.each_key { |k| keys << k if k.is_a?(String) }
    end
    (keys.uniq + ['no_such_key']).each do |key|
      %w[priority array hash].each do |res|
        row = { 'env' => spec['env'], 'key' => key, 'res' => res }
        begin
          row['ok'] = Tagged.encode(hiera.lookup(key, nil, scope, nil, res.to_sym))
        rescue Exception => e
          row['err'] = [e.class.name, e.message]
        end
        out << row
      end
    end
  end
end
out.each { |row| answers.puts JSON.generate(row) }
