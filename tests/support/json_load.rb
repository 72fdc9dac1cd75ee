# Parses every text of a corpus with the json backend's JSON.parse(text) and
# the hiera command's JSON.load(text) (json 2.6.1, as Ruby 3.1.2 bundles
# it) and prints the answers as JSON.
#   ruby json_load.rb CORPUS.json
# CORPUS.json: {"texts": [base64 of each text's bytes],
#               "fuel": [paths of YAML fixtures]}
# Each YAML fixture is first converted to JSON text three ways: compact
# (JSON.generate), pretty (JSON.pretty_generate) and pretty cut off at two
# thirds (a large broken text).
# Output: {"fuel": [text, ...], "answers": [{"parse": A, "load": A}, ...]}
# answers for the texts, then for the fuel texts in order, where A is
#   {"ok": <tagged value>, "exact": bool} or
#   {"inspect": value.inspect, "exact": bool} for values nested deeper than
#   the Rust side's JSON reader takes, or
#   {"error": [class, message], "exact": bool}
# "exact" is false when a String in the value or the message is not valid
# UTF-8 (or is binary with non-ASCII bytes): the tagged form had to scrub it.
require 'json'
require 'yaml'
require 'base64'
require 'hiera' # the constants a `hiera` process has, for json_class
require_relative 'tagged'

def exact?(obj)
  case obj
  when String
    obj.valid_encoding? && (obj.encoding != Encoding::BINARY || obj.ascii_only?)
  when Array then obj.all? { |v| exact?(v) }
  when Hash then obj.all? { |k, v| exact?(k) && exact?(v) }
  else true
  end
end

def depth(obj)
  case obj
  when Array then 1 + (obj.map { |v| depth(v) }.max || 0)
  when Hash then 1 + (obj.values.map { |v| depth(v) }.max || 0)
  else 0
  end
end

def answer
  value = yield
  if depth(value) > 50
    { 'inspect' => value.inspect, 'exact' => exact?(value) }
  else
    { 'ok' => Tagged.encode(value), 'exact' => exact?(value) }
  end
rescue Exception => e # rubocop:disable Lint/RescueException -- every failure is an answer
  message = e.message.dup.force_encoding('UTF-8')
  { 'error' => [e.class.name, message.scrub], 'exact' => message.valid_encoding? }
end

corpus = JSON.parse(File.read(ARGV.fetch(0), encoding: 'UTF-8'))
texts = corpus.fetch('texts').map { |b| Base64.strict_decode64(b).force_encoding('UTF-8') }
fuel = corpus.fetch('fuel').flat_map do |path|
  data = YAML.unsafe_load(File.read(path, encoding: 'BOM|UTF-8'))
  pretty = JSON.pretty_generate(data)
  [JSON.generate(data), pretty, pretty[0, pretty.length * 2 / 3]]
end
answers = (texts + fuel).map do |text|
  { 'parse' => answer { JSON.parse(text) }, 'load' => answer { JSON.load(text) } }
end
puts JSON.generate({ 'fuel' => fuel, 'answers' => answers }, max_nesting: false)
