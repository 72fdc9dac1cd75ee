# Values on the wire (src/wire.rs): plain JSON, plus tagged objects for
# Symbols, NaN/Infinity and Hashes with non-String keys; and hierad's key
# paths. Shared by the Hiera 3 backend and the Hiera 5 functions.
require 'json'

module PuppetX
  module Hierad
    # The server could not be reached or did not answer as a hierad server
    # does. The message always names the server(s) tried. `status` and
    # `body` (a Hash): the HTTP status and JSON error body of a server's
    # refusal (Client#refused); nil when no server answered.
    Error = Class.new(StandardError) do
      attr_accessor :status, :body

      # A datasource kept as the data file it was imported from, which
      # does not parse (docs/api.md, "Files that do not parse"): the 422's
      # body says what Hiera raises reading it (`hiera_class`,
      # `hiera_message`), and what Puppet's yaml_data or json_data do
      # (`puppet_error` or `puppet_warning`). nil for any other error.
      def unparsed
        body if status == 422 && body['error'] == 'unparsed_document'
      end
    end

    module Wire
      TAG = '__hierad__'.freeze
      FLOATS = { 'NaN' => Float::NAN, 'Infinity' => Float::INFINITY, '-Infinity' => -Float::INFINITY }.freeze

      module_function

      # Wire JSON text -> Ruby value. `tagged`: whether the text holds
      # tagged values, when the server said (nil: look).
      def load(text, tagged = nil)
        value = JSON.parse(text, max_nesting: false) # Hiera has no nesting limit
        # Most answers carry no tag: skip the walk (large answers) then.
        tagged.nil? && text.include?(TAG) || tagged ? decode(value) : value
      rescue JSON::ParserError => e
        raise Error, "hierad sent an answer that is not JSON: #{e.message[0, 200]}"
      end

      # Parsed wire JSON -> Ruby value.
      def decode(value)
        case value
        when Array then value.map { |v| decode(v) }
        when Hash
          case value[TAG]
          when nil then value.transform_values { |v| decode(v) }
          when 'sym' then value.fetch('name').to_sym
          when 'float' then FLOATS.fetch(value.fetch('value')) { raise Error, "hierad sent an unknown float: #{value.inspect}" }
          when 'hash' then value.fetch('pairs').to_h { |k, v| [decode(k), decode(v)] }
          else raise Error, "hierad sent an unknown tagged value: #{value.inspect[0, 200]}"
          end
        else value
        end
      end

      # Ruby value -> wire JSON text. One generator state per thread:
      # JSON.generate builds one per call, which costs more than a small
      # request's encoding. No nesting limit (the json library's is 100):
      # Hiera has none, and the server says what it refuses.
      def dump(value)
        (Thread.current[:hierad_json_state] ||= JSON::State.new(max_nesting: 0)).generate(encode(value))
      rescue JSON::GeneratorError => e
        where = unsendable(value) or raise
        # The place, never the text: a scope may hold secrets.
        raise Error, "hierad cannot send the String at #{where.inspect} of a request to the server: " \
                     "it is not valid UTF-8, and the request is JSON, which carries only text (#{e.message})"
      end

      # The path (keys and indexes) to the first String in value that JSON
      # cannot carry, or nil. Only after a failed dump, so it may be slow.
      def unsendable(value, path = [])
        case value
        when String then JSON.generate([value]) && nil
        when Array then value.each_with_index { |v, i| (found = unsendable(v, path + [i])) and return found } && nil
        when Hash then value.each { |k, v| (found = unsendable(k, path + ['(a key)']) || unsendable(v, path + [k])) and return found } && nil
        end
      rescue JSON::GeneratorError
        path
      end

      # Ruby value -> a structure JSON writes as wire JSON.
      def encode(value)
        case value
        when nil, true, false, String, Integer then value
        when Float then value.finite? ? value : { TAG => 'float', 'value' => value.nan? ? 'NaN' : FLOATS.key(value) }
        when Symbol then { TAG => 'sym', 'name' => value.to_s }
        when Array then value.map { |v| encode(v) }
        when Hash
          if value.each_key.all? { |k| k.is_a?(String) && k != TAG } then value.transform_values { |v| encode(v) }
          else { TAG => 'hash', 'pairs' => value.map { |k, v| [encode(k), encode(v)] } }
          end
        else value.to_s # objects a Puppet scope may hold: Hiera would interpolate their text
        end
      end

      # A key as one segment of hierad's key paths (Hiera's dotted-key
      # syntax): quoted when it holds a dot or a quote.
      def key_path(key)
        text = key.to_s
        return text unless text.match?(/[."']/)

        text.include?('"') ? "'#{text}'" : "\"#{text}\""
      end
    end
  end
end
