# The Hiera 5 `data_hash` backend of hierad: each location (`uri`/`uris`)
# is one hierad datasource, fetched whole once per compile (Puppet keeps
# it for the compile) and revalidated with its ETag across compiles.
# Puppet then merges, interpolates and applies lookup_options as it does
# for yaml_data.
#
#   hierarchy:
#     - name: hierad
#       data_hash: hierad::data_hash
#       uris: ["nodes/%{trusted.certname}", common]
#       options: {url: "http://hierad.example:8750", environment: 1, level: "nodes=%{trusted.certname}"}
require_relative '../../../puppet_x/hierad/hiera5'

Puppet::Functions.create_function(:'hierad::data_hash') do
  dispatch :data_hash do
    param 'Hash[String, Any]', :options
    param 'Puppet::LookupContext', :context
  end

  def data_hash(options, context)
    context.explain { "hierad: datasource #{options['uri']} of environment #{options['environment']} at #{options['level'] || 'the root'}" }
    PuppetX::Hierad::Hiera5.data_hash(options)
  end
end
