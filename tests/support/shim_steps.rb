# Looks up, in one Ruby process through Hiera's API (so through the hierad
# backend when the configuration names it), each key read from stdin, one
# a line, as it arrives; prints each answer as a line of JSON:
# {"value": …} or {"error": "Class: message"}. Arguments: the hiera.yaml
# and the scope (JSON). The test in between may change the world (restart
# the server).
require 'hiera'
require 'json'

config, scope = ARGV
hiera = Hiera.new(config: config)
scope = JSON.parse(scope)
$stdout.sync = true
$stdin.each_line do |line|
  key = line.strip
  begin
    puts JSON.generate('value' => hiera.lookup(key, nil, scope))
  rescue Exception => e # rubocop:disable Lint/RescueException -- Hiera raises Exception
    puts JSON.generate('error' => "#{e.class}: #{e.message}")
  end
end
