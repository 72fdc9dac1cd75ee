# @summary Uploads the yaml files of /etc/hiera to a hierad server
#   (the deployment task of docs/spec/configdb-api.md), for sites that run Puppet but not Bolt.
#
# Each yaml file becomes the datasource of its path without `.yaml`
# (`override/plugins.yaml` -> `override/plugins`), all written at `level`
# of `environment` in one all-or-nothing import. The upload runs on the
# agent when the files differ from those it last uploaded there.
#
# @param url The hierad server, or a list of URLs tried in order.
# @param environment The hierad environment (created with levels [nodes] if missing).
# @param level The level path; the node's own by default. '' is the root.
# @param datadir The folder uploaded.
# @param replace Delete datasources uploaded before whose file is gone.
# @param register Add the level's values to the environment's registers.
# @param send_facts Store the node's facts as its scope on the server (the
#   node the level ends in; it must be registered: see `register`), so a
#   lookup naming the node gets them.
# @param token A bearer token, when the server asks for one.
# @param ca_file The CA certificate to trust for an https:// url.
class hierad_resources::upload (
  Variant[String[1], Array[String[1], 1]] $url,
  Integer $environment,
  String $level = "nodes=${facts['networking']['fqdn']}",
  Pattern[/\A\//] $datadir = '/etc/hiera',
  Boolean $replace = true,
  Boolean $register = false,
  Boolean $send_facts = false,
  Optional[Sensitive[String[1]]] $token = undef,
  Optional[String[1]] $ca_file = undef,
) {
  hierad_upload { $datadir:
    url         => $url,
    environment => $environment,
    level       => $level,
    replace     => $replace,
    register    => $register,
    facts       => $send_facts ? { true => $facts, default => undef },
    token       => $token.then |$t| { $t.unwrap },
    ca_file     => $ca_file,
  }
}
