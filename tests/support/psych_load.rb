# Loads every YAML text of a corpus the way Hiera's yaml backend does
# (File.read with 'BOM|UTF-8', then YAML.load), or with `puppet` the way
# Puppet 7's yaml_data does (Puppet::Util::Yaml.safe_load: aliases
# allowed), and prints the results as JSON: one {"ok": <tagged value>} or
# {"error": [class, message]} per text.
#   ruby psych_load.rb CORPUS.json [puppet]   (a JSON array of strings)
require 'json'
require 'yaml'
require 'tempfile'
require_relative 'tagged'

texts = JSON.parse(File.read(ARGV.fetch(0), encoding: 'UTF-8'))
puppet = ARGV[1] == 'puppet'
load = lambda do |text|
  puppet ? YAML.safe_load(text, permitted_classes: [Symbol], aliases: true) : YAML.load(text)
end
file = Tempfile.new(['case', '.yaml'])
results = texts.map do |text|
  File.binwrite(file.path, text)
  begin
    { 'ok' => Tagged.encode(load.call(File.read(file.path, encoding: 'BOM|UTF-8'))) }
  rescue Exception => e # rubocop:disable Lint/RescueException -- every failure is an answer
    # Ruby 3.1's error_highlight appends source snippets to NameError's
    # message (NoMethodError included); other messages stay whole.
    message = e.is_a?(NameError) ? e.message.lines.first.to_s.chomp : e.message
    { 'error' => [e.class.name, message] }
  end
end
file.close!
puts JSON.generate(results, max_nesting: false)
