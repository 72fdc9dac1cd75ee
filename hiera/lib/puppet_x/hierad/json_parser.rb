# The JSON parser of the shim's answers: the json library, or Oj
# (Debian's ruby-oj, the oj gem elsewhere) when it is installed and this
# Ruby has parsed enough answers for loading it to pay off. Oj decodes a
# large answer in three quarters of the json library's time within a
# lookup, half on its own (BENCHMARKS.md, "The shim's JSON parser, and
# X-Hierad-Tagged"), but loading it costs about 40 ms (it loads
# bigdecimal, date and time): a one-shot `hiera` command would lose, a
# Puppet master gains.
# So the json library parses the first OJ_AFTER bytes (about as long as
# loading Oj takes), then Oj parses the rest.
#
# Both give the same Ruby values (hiera/test/json_parser_test.rb): new,
# unfrozen UTF-8 Strings every time, Floats bit for bit, Integers of any
# size, no nesting limit. JRuby (Puppet Server) has no Oj: the json
# library then parses everything.
#
# HIERAD_SHIM_JSON=json in the environment keeps the json library;
# HIERAD_SHIM_JSON=oj loads Oj at once (an error if it is not installed).
require 'json'

module PuppetX
  module Hierad
    class Error < StandardError; end # as in wire.rb: a server that did not answer as one

    module JsonParser
      # Oj.load as JSON.parse, whatever another library made Oj's defaults:
      # JSON types only (strict); a number with a fraction or an exponent a
      # Float (never a BigDecimal); no String cached (cached ones are frozen
      # and shared); Integers never turned into Strings or Floats; names
      # kept Strings. Keys are cached: Hash keys are frozen copies anyway.
      OJ_OPTIONS = {
        mode: :strict, bigdecimal_load: :float, cache_str: 0, cache_keys: true, symbol_keys: false,
        integer_range: nil, hash_class: nil, array_class: nil, allow_invalid_unicode: false
      }.freeze
      # Hiera sets no nesting limit: a value 101 levels deep is data.
      JSON_OPTIONS = { max_nesting: false }.freeze
      # Bytes the json library parses before Oj is loaded: parsing them
      # takes it about as long as loading Oj does.
      OJ_AFTER = 2 * 1024 * 1024
      CHOICES = %w[json oj].freeze

      @oj = nil # nil: not tried yet; true: Oj parses; false: json does
      @parsed = 0
      @mutex = Mutex.new

      class << self
        # JSON text -> Ruby value; Error if the text is not JSON.
        def parse(text)
          return parse_oj(text) if @oj

          if @oj.nil?
            @parsed += text.bytesize
            load_oj if @parsed >= OJ_AFTER
          end
          parse_json(text)
        end

        def parse_json(text)
          JSON.parse(text, JSON_OPTIONS)
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
          @mutex.synchronize do
            @parsed = 0
            @oj =
              case choice.to_s
              when 'json' then false
              when 'oj' then oj_loaded || raise(Error, 'hierad: HIERAD_SHIM_JSON=oj, but Oj does not load (install ruby-oj or the oj gem)')
              when '' then defined?(::Oj.load) ? oj_loaded : nil
              else raise Error, "hierad: HIERAD_SHIM_JSON must be one of #{CHOICES.join(', ')}, not #{choice.inspect}"
              end
          end
        end

        private

        def load_oj
          @mutex.synchronize { @oj = oj_loaded if @oj.nil? }
        end

        # True once Oj is loaded, false where it cannot be (not installed,
        # JRuby).
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
