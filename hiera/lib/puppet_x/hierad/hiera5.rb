# What the Hiera 5 functions `hierad_data_hash` and `hierad_lookup_key`
# share: their options, one client per server configuration, the
# revalidated cache of whole datasources, and their errors.
#
# Options (the `options:` of a hierarchy entry in a version 5 hiera.yaml;
# Puppet interpolates them, so `level: "nodes=%{facts.networking.fqdn}"`):
#   url          one URL or a list, tried in order
#   environment  the hierad environment id
#   level        a level path such as nodes=node-1 (none: the root)
#   token | user + password, ca_file, connect_timeout, read_timeout
#   failure      error (default) or stale
# The datasource (resource) of each location comes from `uri`/`uris`.
require_relative 'client'

module PuppetX
  module Hierad
    module Hiera5
      OPTION_NAMES = %w[url environment level token user password ca_file connect_timeout read_timeout failure].freeze
      CLIENT_OPTIONS = %w[url token user password ca_file connect_timeout read_timeout].freeze
      # Whole datasources kept across compiles (revalidated each compile).
      CACHE_MAX = 2_000
      NOT_DEFINED = /\Aresource ".*" is not defined in environment /.freeze

      @mutex = Mutex.new
      @clients = {}
      @cache = {}

      class << self
        # One client per server configuration, shared by every compile in
        # this Ruby (and so its keep-alive connections).
        def client(options)
          key = CLIENT_OPTIONS.map { |name| options[name] }
          @mutex.synchronize do
            @clients[key] ||= Client.new(options.select { |name, _| CLIENT_OPTIONS.include?(name) })
          end
        rescue Error => e
          raise lookup_error(e.message)
        end

        def lookup_error(message)
          klass = defined?(Puppet::DataBinding::LookupError) ? Puppet::DataBinding::LookupError : RuntimeError
          klass.new(message)
        end

        def check_options(options, function)
          unknown = options.keys - OPTION_NAMES - %w[uri path]
          raise lookup_error("#{function}: unknown option(s) #{unknown.join(', ')} (known: #{OPTION_NAMES.join(', ')})") unless unknown.empty?
          raise lookup_error("#{function}: option 'url' is required (one hierad URL or a list)") if options['url'].nil?
          raise lookup_error("#{function}: option 'environment' is required (a hierad environment id)") if options['environment'].to_s.empty?

          mode = (options['failure'] || 'error').to_s
          raise lookup_error("#{function}: option 'failure' must be error or stale, not #{mode}") unless %w[error stale].include?(mode)
        end

        def resource(options, function)
          name = options['uri'].to_s
          raise lookup_error("#{function}: the hierarchy entry must name hierad datasources with uri: or uris:") if name.empty?

          name
        end

        def stale?(options)
          options['failure'].to_s == 'stale'
        end

        # GET with the configured failure handling: a server that cannot be
        # reached is an error naming it, never a missing key.
        def get(client, options, path, headers = '')
          client.get(path, headers)
        rescue Error => e
          raise lookup_error(e.message) unless stale?(options)

          yield e
        end

        def fail_response(client, what, response)
          raise lookup_error("hierad: #{client.urls.join(', ')}: #{what}: HTTP #{response.status}: #{response.error_message}")
        end

        # A whole effective datasource, with Symbol keys made Strings as
        # yaml_data makes them; revalidated with its ETag, so a compile costs
        # one small request per datasource when nothing changed.
        def data_hash(options)
          check_options(options, 'hierad_data_hash')
          client = client(options)
          path = "/api/v1/data/#{Escape.component(options['environment'])}/#{Escape.path(resource(options, 'hierad_data_hash'))}"
          level = options['level'].to_s
          path += "?level=#{Escape.component(level)}" unless level.empty?
          key = "#{client.urls.join(' ')} #{path}"
          cached = @mutex.synchronize { @cache[key] }
          response = get(client, options, path, cached ? "If-None-Match: #{cached[0]}\r\n" : '') do |error|
            raise lookup_error(error.message) unless cached

            Puppet.warning("#{error.message}; using the copy of #{path} fetched earlier (failure: stale)") if defined?(Puppet)
            return cached[1]
          end
          case response.status
          when 304
            cached[1]
          when 200
            data = Puppet::Pops::Lookup::HieraConfig.symkeys_to_string(Wire.load(response.body))
            remember(key, response.headers['etag'], data)
            data
          when 404
            # A datasource nobody wrote is empty, as a missing file is to yaml_data.
            return {} if response.error_kind == 'not_found' && response.error_message =~ NOT_DEFINED

            fail_response(client, "GET #{path}", response)
          else
            fail_response(client, "GET #{path}", response)
          end
        end

        def remember(key, etag, data)
          return unless etag

          @mutex.synchronize do
            @cache.delete(key)
            @cache.shift if @cache.size >= CACHE_MAX
            @cache[key] = [etag, data]
          end
        end

        # One key of one effective datasource: [found, value].
        def lookup_key(key, options)
          check_options(options, 'hierad_lookup_key')
          client = client(options)
          levels = options['level'].to_s.split(',').map do |pair|
            name, value = pair.split('=', 2)
            "#{Escape.component(name)}/#{Escape.component(value)}/"
          end.join
          path = "/api/v1/config/environments/#{Escape.component(options['environment'])}/#{levels}" \
                 "resources/#{Escape.path(resource(options, 'hierad_lookup_key'))}/values?effective&key=#{Escape.component(quote_key(key))}"
          response = get(client, options, path) { |error| raise lookup_error(error.message) }
          case response.status
          when 200
            [true, Puppet::Pops::Lookup::HieraConfig.symkeys_to_string(Wire.load(response.body))]
          when 404
            message = response.error_message
            return [false, nil] if message =~ NOT_DEFINED || message.start_with?('key ')

            fail_response(client, "GET #{path}", response)
          else
            fail_response(client, "GET #{path}", response)
          end
        end

        # The key as one segment of hierad's key paths (Hiera's dotted-key
        # syntax): quoted when it holds a dot or a quote.
        def quote_key(key)
          text = key.to_s
          return text unless text.include?('.') || text.include?('"') || text.include?("'")

          text.include?('"') ? "'#{text}'" : "\"#{text}\""
        end
      end
    end
  end
end
