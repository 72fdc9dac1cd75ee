# The type behind the class hierad_resources::upload: the yaml files of a folder
# (/etc/hiera, docs/spec/configdb-api.md) uploaded to a hierad server at one level of one
# environment. In sync when the files are those last uploaded from this
# node to that place (their digest is kept under Puppet's vardir); a change
# to any file, a new or a removed one, uploads the folder again.
Puppet::Type.newtype(:hierad_upload) do
  @doc = 'Uploads the yaml files of a Hiera data folder to a hierad server (the upload task of docs/spec/configdb-api.md).'

  newparam(:datadir, namevar: true) do
    desc 'The folder whose yaml files are uploaded, e.g. /etc/hiera.'
    validate do |value|
      raise ArgumentError, "datadir must be an absolute path, not #{value.inspect}" unless value.to_s.start_with?('/')
    end
  end

  newparam(:url) do
    desc 'The hierad server URL, or a list of URLs tried in order.'
  end

  newparam(:environment) do
    desc 'The hierad environment id (created with levels [nodes] if missing).'
    munge { |value| Integer(value) }
  end

  newparam(:level) do
    desc 'The level path, e.g. nodes=node-1.domain.tld; empty for the root.'
    defaultto ''
  end

  newparam(:replace, boolean: true, parent: Puppet::Parameter::Boolean) do
    desc 'Delete the datasources uploaded before whose file is gone.'
    defaultto true
  end

  newparam(:register, boolean: true, parent: Puppet::Parameter::Boolean) do
    desc "Add the level's values to the environment's registers."
    defaultto false
  end

  newparam(:facts) do
    desc "The node's facts (a Hash), stored as the scope of the node the level ends in; none by default."
    validate do |value|
      raise ArgumentError, "facts must be a Hash, not #{value.class}" unless value.is_a?(Hash)
    end
  end

  newparam(:token) do
    desc 'A bearer token, when the server asks for one.'
    sensitive true
  end

  newparam(:ca_file) do
    desc 'The CA certificate to trust for an https:// url.'
  end

  newproperty(:uploaded) do
    desc 'Read only in effect: the digest of the files last uploaded; set to that of the files now.'
    defaultto :current

    def insync?(is)
      is == provider.digest
    end

    def should_to_s(_value)
      provider.digest
    end

    def change_to_s(from, _to)
      "uploaded #{resource[:datadir]} (#{from == :absent ? 'first upload' : 'files changed'})"
    end
  end

  validate do
    raise ArgumentError, 'hierad_upload needs url' if self[:url].nil?
    raise ArgumentError, 'hierad_upload needs environment' if self[:environment].nil?
  end
end
