# What the Hiera 5 functions `hierad::data_hash` and `hierad::lookup_key`
# do over HTTP (both read whole datasources): their options, and their
# errors as Puppet's LookupError.
#
# Options (the `options:` of a hierarchy entry in a version 5 hiera.yaml;
# Puppet interpolates them, so `level: "nodes=%{facts.networking.fqdn}"`):
#   url          one URL or a list, tried in order
#   environment  the hierad environment id
#   level        a level path such as nodes=node-1 (none: the root)
#   token | user + password | keystone_token (each also as a *_file: its
#                first line), ca_file, cert_file + key_file (a Puppet
#                master's hostcert and hostprivkey), connect_timeout,
#                read_timeout
#   failure      error (default) or stale
# The datasource (resource) of each location comes from `uri`/`uris`.
require_relative 'cache'

module PuppetX
  module Hierad
    module Hiera5
      OPTION_NAMES = (Client::OPTIONS.map(&:to_s) + %w[environment level failure]).freeze
      # Symbol keys become Strings, as yaml_data makes them.
      @datasources = Datasources.new { |data| Puppet::Pops::Lookup::HieraConfig.symkeys_to_string(data) }

      # A whole effective datasource. `function` is named in errors about
      # the options.
      def self.data_hash(options, function = 'hierad::data_hash')
        stale = check(options, function) == 'stale'
        client = Client.shared(options)
        @datasources.fetch(client, options['environment'], options['level'], options['uri'].to_s, stale) { |w| Puppet.warning(w) }
      rescue Error => e
        raise Puppet::DataBinding::LookupError, e.message
      end

      # The failure mode of valid options; a LookupError naming the
      # function otherwise.
      def self.check(options, function)
        unknown = options.keys - OPTION_NAMES - %w[uri path]
        mode = (options['failure'] || 'error').to_s
        problem =
          if !unknown.empty? then "unknown option(s) #{unknown.join(', ')} (known: #{OPTION_NAMES.join(', ')})"
          elsif options['url'].nil? then "option 'url' is required (one hierad URL or a list)"
          elsif options['environment'].to_s.empty? then "option 'environment' is required (a hierad environment id)"
          elsif !Cache::FAILURE_MODES.include?(mode) then "option 'failure' must be error or stale, not #{mode}"
          elsif options['uri'].to_s.empty? then 'the hierarchy entry must name hierad datasources with uri: or uris:'
          end
        raise Puppet::DataBinding::LookupError, "#{function}: #{problem}" if problem

        mode
      end
    end
  end
end
