# What the Hiera 5 functions `hierad_data_hash` and `hierad_lookup_key`
# do over HTTP (both read whole datasources): their options, the
# revalidated cache of whole datasources, and their errors.
#
# Options (the `options:` of a hierarchy entry in a version 5 hiera.yaml;
# Puppet interpolates them, so `level: "nodes=%{facts.networking.fqdn}"`):
#   url          one URL or a list, tried in order
#   environment  the hierad environment id
#   level        a level path such as nodes=node-1 (none: the root)
#   token | user + password | keystone_token (each also as a *_file: its
#                first line), ca_file, cert_file + key_file
#                (a Puppet master's own certificate: its hostcert and
#                hostprivkey), connect_timeout, read_timeout
#   failure      error (default) or stale
# The datasource (resource) of each location comes from `uri`/`uris`.
require_relative 'client'
require_relative 'cache'

module PuppetX
  module Hierad
    module Hiera5
      OPTION_NAMES = (Client::OPTIONS.map(&:to_s) + %w[environment level failure]).freeze
      # A datasource nobody wrote: empty, as a missing file is to yaml_data.
      NOT_DEFINED = /\Aresource ".*" is not defined in environment /.freeze
      # Whole datasources kept across compiles (revalidated each compile).
      @datasources = Cache.new(2_000)

      class << self
        # A whole effective datasource, with Symbol keys made Strings as
        # yaml_data makes them; revalidated with its ETag, so a compile costs
        # one small request per datasource when nothing changed. `function`
        # is named in errors about the options.
        def data_hash(options, function = 'hierad_data_hash')
          client, resource = check(options, function)
          path = "/api/v1/data/#{Escape.component(options['environment'])}/#{Escape.path(resource)}"
          level = options['level'].to_s
          path += "?level=#{Escape.component(level)}" unless level.empty?
          key = "#{client.urls.join(' ')} #{path}"
          etag, data = @datasources[key]
          response = get(client, path, etag ? { 'If-None-Match' => etag } : {}) do |error|
            raise lookup_error(error.message) unless data && options['failure'].to_s == 'stale'

            Puppet.warning("#{error.message}; using the copy of #{path} fetched earlier (failure: stale)")
            return data
          end
          case response.status
          when 304 then data
          when 200
            data = Puppet::Pops::Lookup::HieraConfig.symkeys_to_string(Wire.load(response.body))
            @datasources[key] = [response.headers['etag'], data] if response.headers['etag']
            data
          else
            return {} if response.status == 404 && response.error_message =~ NOT_DEFINED

            raise lookup_error(client.refused("GET #{path}", response).message)
          end
        end

        private

        # The client and the resource of valid options; a LookupError naming
        # the function otherwise.
        def check(options, function)
          unknown = options.keys - OPTION_NAMES - %w[uri path]
          raise lookup_error("#{function}: unknown option(s) #{unknown.join(', ')} (known: #{OPTION_NAMES.join(', ')})") unless unknown.empty?
          raise lookup_error("#{function}: option 'url' is required (one hierad URL or a list)") if options['url'].nil?
          raise lookup_error("#{function}: option 'environment' is required (a hierad environment id)") if options['environment'].to_s.empty?

          mode = (options['failure'] || 'error').to_s
          raise lookup_error("#{function}: option 'failure' must be error or stale, not #{mode}") unless Cache::FAILURE_MODES.include?(mode)
          raise lookup_error("#{function}: the hierarchy entry must name hierad datasources with uri: or uris:") if options['uri'].to_s.empty?

          [Client.shared(options), options['uri'].to_s]
        rescue Error => e
          raise lookup_error(e.message)
        end

        # A GET whose failure to reach any server goes to the block: an
        # error naming the servers, never a missing key.
        def get(client, path, headers = {})
          client.get(path, headers)
        rescue Error => e
          yield e
        end

        def lookup_error(message)
          Puppet::DataBinding::LookupError.new(message)
        end
      end
    end
  end
end
