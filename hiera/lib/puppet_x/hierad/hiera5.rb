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
#   generation | tag  read every datasource as of this generation (or
#                the tag's): one deployment reads one view
# The datasource (resource) of each location comes from `uri`/`uris`.
require_relative 'cache'

module PuppetX::Hierad::Hiera5
  # Symbol keys become Strings, as yaml_data makes them.
  @datasources = PuppetX::Hierad::Datasources.new { |data| Puppet::Pops::Lookup::HieraConfig.symkeys_to_string(data) }

  # A whole effective datasource. `function` is named in errors about
  # the options.
  def self.data_hash(options, function = 'hierad::data_hash')
    settings = options.reject { |k, _| %w[uri path].include?(k) }.to_h { |k, v| [k.to_sym, v] }
    problem = PuppetX::Hierad::Client.problem(settings, 'option')
    problem ||= 'the hierarchy entry must name hierad datasources with uri: or uris:' if options['uri'].to_s.empty?
    raise Puppet::DataBinding::LookupError, "#{function}: #{problem}" if problem

    @datasources.fetch(PuppetX::Hierad::Client.shared(settings), *options.values_at('environment', 'level', 'uri'),
                       settings[:failure].to_s == 'stale', options.slice('generation', 'tag')) { |w| Puppet.warning(w) }
  rescue PuppetX::Hierad::Error => e
    # A kept file that does not parse: what yaml_data or json_data do
    # over it, in the server's words.
    raise Puppet::DataBinding::LookupError, e.unparsed&.fetch('puppet_error', nil) || e.message unless (warning = e.unparsed&.fetch('puppet_warning', nil))

    Puppet.warning(warning)
    {}
  end
end
