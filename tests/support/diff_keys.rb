# Lists the top-level String keys of YAML data files as Hiera's yaml backend
# reads them (YAML.load, i.e. Psych 4's safe load), as one JSON array in file
# order, for tests/oracle/differential.rs to generate lookups from. It never
# answers a lookup: answers come from diff_oracle.rb.
require 'json'
require 'yaml'

keys = ARGV.flat_map do |file|
  data = YAML.load(File.read(file, encoding: 'BOM|UTF-8'))
  data.is_a?(Hash) ? data.keys.grep(String) : []
end
puts JSON.generate(keys.uniq)
