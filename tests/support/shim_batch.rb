# For tests/oracle/shim: the same lookups through Hiera's API, in one process,
# once with the yaml backend and once with the hierad backend, compared
# value by value (classes, Hash order, and each scalar's Marshal bytes, so
# encodings too; not object identity, which Ruby's interning of Hash keys
# makes vary from run to run) or error by error (class and message).
#
# Reaches what the `hiera` command cannot: order overrides and Hash
# resolution types (what Puppet's hiera_hash and hiera3_backend pass).
#
# Input (stdin, JSON): {"worlds": [{"name", "dir", "yaml_config",
#   "hierad_config", "scope", "keys_from": dir}]}; keys are every String
#   top-level key of the YAML files under keys_from, plus one missing key.
# Output (stdout, JSON): {"lookups": N, "errors": N, "mismatches": [...],
#   "keys": {world name: {key looked up: bytes of its answer's inspect}},
#   "backend_lookups": N}.
require 'json'
require 'yaml'
require 'hiera'
require 'hiera/backend/hierad_backend'

# Counts the hierad backend's lookups, to weigh them against the server's
# request count (a key Hiera refuses never reaches a backend).
module CountLookups
  class << self
    attr_accessor :count
  end
  self.count = 0

  def lookup(*args)
    CountLookups.count += 1
    super
  end
end
Hiera::Backend::Hierad_backend.prepend(CountLookups)

MISSING = 'no_such_key_anywhere'.freeze

def keys_under(dir)
  Dir.glob(File.join(dir, '**', '*.yaml')).sort.flat_map do |file|
    data = YAML.load(File.read(file)) rescue nil
    data.is_a?(Hash) ? data.keys.grep(String) : []
  end.uniq
end

def outcome
  [:value, yield]
rescue Exception => e # rubocop:disable Lint/RescueException -- Hiera raises Exception itself
  [:error, "#{e.class}: #{e.message}"]
end

# Where two values first differ, for the report.
def first_difference(a, b, path = '')
  return "#{path}: #{a.class} vs #{b.class}" unless a.class == b.class

  case a
  when Hash
    return "#{path}: keys #{a.keys.inspect[0, 200]} vs #{b.keys.inspect[0, 200]}" unless a.size == b.size

    a.to_a.zip(b.to_a).each do |(ka, va), (kb, vb)|
      d = first_difference(ka, kb, "#{path}.keys") || first_difference(va, vb, "#{path}[#{ka.inspect}]")
      return d if d
    end
    nil
  when Array
    return "#{path}: #{a.size} vs #{b.size} elements" unless a.size == b.size

    a.each_index do |i|
      d = first_difference(a[i], b[i], "#{path}[#{i}]")
      return d if d
    end
    nil
  else
    Marshal.dump(a) == Marshal.dump(b) ? nil : "#{path}: #{a.inspect[0, 200]} vs #{b.inspect[0, 200]}"
  end
end

def config_hash(path)
  YAML.load_file(path)
end

input = JSON.parse($stdin.read)
lookups = 0
errors = 0
mismatches = []
keys_of = {}
input.fetch('worlds').each do |world|
  Dir.chdir(world.fetch('dir')) do
    configs = { yaml: config_hash(world.fetch('yaml_config')), hierad: config_hash(world.fetch('hierad_config')) }
    scope = world.fetch('scope')
    run = lambda do |backend, key, override, resolution|
      hiera = Hiera.new(config: Marshal.load(Marshal.dump(configs.fetch(backend))))
      outcome { hiera.lookup(key, nil, scope, override, resolution) }
    end
    keys = keys_under(world.fetch('keys_from')) + [MISSING]
    sizes = keys_of[world.fetch('name')] = {}
    compare = lambda do |key, override, resolution|
      lookups += 1
      yaml = run.call(:yaml, key, override, resolution)
      hierad = run.call(:hierad, key, override, resolution)
      errors += 1 if yaml[0] == :error
      difference =
        if yaml[0] == :value && hierad[0] == :value then first_difference(yaml[1], hierad[1])
        elsif yaml != hierad then 'value vs error'
        end
      if difference
        mismatches << {
          'world' => world['name'], 'key' => key, 'override' => override.inspect, 'resolution' => resolution.inspect,
          'difference' => difference,
          'yaml' => yaml[0] == :error ? yaml[1] : yaml[1].inspect[0, 300],
          'hierad' => hierad[0] == :error ? hierad[1] : hierad[1].inspect[0, 300]
        }
      end
      yaml
    end
    keys.each_with_index do |key, i|
      first = compare.call(key, nil, :priority)
      sizes[key] = first[1].inspect.bytesize
      compare.call(key, nil, :array)
      compare.call(key, nil, :hash)
      value = first[1]
      if value.is_a?(Hash)
        # Per-call merge behaviours, as hiera_hash and hiera3_backend pass them.
        compare.call(key, nil, { behavior: :deeper, knockout_prefix: '--', sort_merged_arrays: true })
        compare.call(key, nil, { behavior: 'deep' })
        compare.call(key, nil, { behavior: :native, 'knockout_prefix' => 'ignored: a String key' })
        sub = value.keys.grep(String).first
        compare.call("#{key}.#{sub}", nil, :priority) if sub
        compare.call("#{key}.'#{sub}'.0", nil, :priority) if sub && !sub.include?("'")
      elsif value.is_a?(Array)
        compare.call("#{key}.0", nil, :priority)
      end
      # Order overrides: an existing datasource, and a list of two.
      next unless (i % 5).zero?

      compare.call(key, 'astute', :priority)
      compare.call(key, ['globals', 'override/plugins'], :array)
      compare.call(key, 'globals', { behavior: :deeper })
    end
  end
end
$stdout.write(JSON.generate('lookups' => lookups, 'errors' => errors, 'mismatches' => mismatches, 'keys' => keys_of,
                            'backend_lookups' => CountLookups.count))
