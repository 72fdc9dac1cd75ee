# For tests/oracle/shim/puppet.rs: several catalog compiles in one Puppet (as in
# a Puppet Server), each looking keys up through `hierad::data_hash`, with
# the server's request counts by status after each; between the second
# and the third, one value changes on the server.
#
# Input (stdin, JSON): {"dir" (scratch), "env_dir", "yaml_env_dir",
#   "node", "facts", "keys": [[key, merge]], "url" (hierad),
#   "change": {"path", "value"}}.
# Output (stdout, JSON): {"yaml": [values] (a compile with yaml_data),
#   "compiles": [{"values": [...], "requests": {"200": n, …}}]}.
require 'json'
require 'puppet'
require 'puppet_pal'
require 'net/http'

input = JSON.parse($stdin.read)
dir = input.fetch('dir')
Puppet.initialize_settings(%w[confdir vardir codedir rundir logdir].flat_map { |s| ["--#{s}", File.join(dir, s)] } +
                           ['--certname', input.fetch('node')])
# Net::HTTP, not the shim's client: the module's copy of the shim is the
# one under test, and loading a second copy would redefine it.
hierad = Net::HTTP.start(URI(input.fetch('url')).host, URI(input.fetch('url')).port)
route = 'hierad_http_requests_total{method="GET",route="/api/v1/data/{env}/{*resource}",status="'

requests = lambda do
  hierad.get('/metrics').body.lines.select { |l| l.start_with?(route) }.to_h do |l|
    [l[route.size, 3], l.split.last.to_i]
  end
end

lookups = lambda do |env_dir|
  # Facts to the compiler: PAL freezes an environment's facts, then fails
  # to merge them into the node.
  Puppet::Pal.in_environment('production', env_dir: env_dir, facts: {}) do |pal|
    pal.with_catalog_compiler(facts: input.fetch('facts').dup) do |c|
      input.fetch('keys').map { |key, merge| c.evaluate_string("lookup('#{key}', Any, '#{merge}', 'NOT FOUND')") }
    end
  end
end

compile = lambda do
  before = requests.call
  values = lookups.call(input.fetch('env_dir'))
  after = requests.call
  { 'values' => values, 'requests' => after.to_h { |status, n| [status, n - before.fetch(status, 0)] } }
end

yaml = lookups.call(input.fetch('yaml_env_dir'))
out = [compile.call, compile.call]
change = input.fetch('change')
response = hierad.put(change.fetch('path'), JSON.generate(change.fetch('value')), 'Content-Type' => 'application/json')
raise "PUT #{change['path']}: #{response.code} #{response.body}" unless response.code == '204'

out << compile.call
$stdout.write(JSON.generate('yaml' => yaml, 'compiles' => out))
