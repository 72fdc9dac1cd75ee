# The JSON parser of the shim's answers: the json library, or Oj (Debian's
# ruby-oj, the oj gem elsewhere) once this Ruby has parsed OJ_AFTER bytes
# of answers. Oj decodes a large answer in three quarters of the json
# library's time within a lookup (bench/LOG.md, "The shim's JSON parser,
# and X-Hierad-Tagged"), but loading it costs about 40 ms: a one-shot
# `hiera` command would lose, a Puppet master gains. Both give the same
# Ruby values (hiera/test/json_parser_test.rb); JRuby has no Oj.
# HIERAD_SHIM_JSON=json keeps the json library; =oj loads Oj at once.
require 'json'

module PuppetX
  module Hierad
    # The server could not be reached or did not answer as a hierad server
    # does. The message always names the server(s) tried.
    class Error < StandardError
      # The HTTP status of a server's refusal (Client#refused); nil when no
      # server answered.
      attr_accessor :status
    end

    module JsonParser
      # Oj.load as JSON.parse, whatever another library made Oj's defaults:
      # JSON types only, Floats never BigDecimals, Strings never cached
      # (cached ones are frozen and shared), Integers kept, names Strings.
      OJ_OPTIONS = {
        mode: :strict, bigdecimal_load: :float, cache_str: 0, cache_keys: true, symbol_keys: false,
        integer_range: nil, hash_class: nil, array_class: nil, allow_invalid_unicode: false
      }.freeze
      OJ_AFTER = 2 * 1024 * 1024 # parsing these takes json about as long as loading Oj
      CHOICES = { 'json' => false, 'oj' => true, '' => nil }.freeze

      class << self
        # JSON text -> Ruby value; Error if the text is not JSON.
        def parse(text)
          @oj = oj_loaded if @oj.nil? && (@parsed += text.bytesize) >= OJ_AFTER
          @oj ? parse_oj(text) : parse_json(text)
        end

        def parse_json(text)
          JSON.parse(text, max_nesting: false) # Hiera has no nesting limit
        rescue JSON::ParserError => e
          raise Error, "hierad sent an answer that is not JSON: #{e.message[0, 200]}"
        end

        def parse_oj(text)
          Oj.load(text, OJ_OPTIONS)
        rescue Oj::ParseError, EncodingError => e
          raise Error, "hierad sent an answer that is not JSON: #{e.message[0, 200]}"
        end

        # Which parser parses answers now: 'json' or 'oj'.
        def current
          @oj ? 'oj' : 'json'
        end

        # Back to what HIERAD_SHIM_JSON asks for (tests and benchmarks).
        def reset(choice = ENV['HIERAD_SHIM_JSON'])
          @parsed = 0
          @oj = CHOICES.fetch(choice.to_s) { raise Error, "hierad: HIERAD_SHIM_JSON must be one of json, oj, not #{choice.inspect}" }
          @oj = true if @oj.nil? && defined?(::Oj.load)
          raise Error, 'hierad: HIERAD_SHIM_JSON=oj, but Oj does not load (install ruby-oj or the oj gem)' if @oj && !oj_loaded
        end

        private

        # Whether Oj loads (not installed, JRuby: false).
        def oj_loaded
          require 'oj'
          true
        rescue LoadError
          false
        end
      end

      reset
    end
  end
end
