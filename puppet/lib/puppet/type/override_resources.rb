# override_resources: changes the resources of the catalog being applied
# with data (docs/spec/override-resources.md). For each `<type>` of
# `configuration`, then each `<title>` under it: the resource of that type
# and title found in the catalog gets the parameters the data gives (its
# type's `defaults` below them); a resource the catalog lacks is created
# with them, as `create` and its exception lists decide. `types_filter` and
# `titles_filter` limit what this instance processes.
#
#   override_resources { 'hierad':
#     configuration => lookup('configuration', Hash, 'hash', {}),
#     options       => lookup('configuration_options', Hash, 'hash', {}),
#     defaults      => lookup('defaults', Hash, 'hash', {}),
#   }
#
# or, the same in one line, `include hierad_resources::override`.
#
# Two forms, told apart by the title alone. An instance whose title is
# exactly the name of a resource type (built in or in the modulepath) takes
# that type's data without the type level, as the Fuel specification's own
# example does (<https://blueprints.launchpad.net/fuel/+spec/puppet-resource-override>)
# (and fuel-library's first version of the type did):
#
#   override_resources { 'package':
#     configuration => { 'mc' => { 'ensure' => 'latest' } },   # <title> => <parameters>
#     defaults      => { 'ensure' => 'installed' },             # <parameter> => value
#   }
#
# Any other title (`hierad`, `hierad_resources::override`) takes the nested form
# above. The title decides, not the data's shape: a parameter's value may
# itself be a Hash, so the shape alone cannot tell the forms apart.
#
# It works on the agent's catalog before anything is applied: `generate`
# (which Puppet calls for every resource before the first is evaluated)
# updates and creates, so an updated resource is applied with its new
# parameters wherever it sits in the catalog. Whatever can be checked
# without the catalog is checked when the catalog is built (an error there
# fails the run): the shape of the data, options and their types, that
# every processed type is in the modulepath and knows every parameter the
# data gives it. A value a type refuses (`mode => 'rwx'`) fails the run
# before any resource is applied.
require_relative '../../puppet_x/hierad_resources/override'

Puppet::Type.newtype(:override_resources) do
  @doc = 'Updates or creates resources of the catalog from data: `configuration` ' \
         '(<type> => <title> => <parameters>), `options` (configuration_options) and `defaults`. ' \
         'An instance titled with the name of a type takes that type\'s data alone: ' \
         '`configuration` (<title> => <parameters>) and `defaults` (<parameter> => value).'

  newparam(:name, namevar: true) do
    desc 'A name for this instance; the name of a resource type selects the per-type form.'
  end

  newparam(:configuration) do
    desc 'The resources: a Hash of <type> => <title> => <parameter> => value ' \
         '(<title> => <parameter> => value when the title names a type).'
    defaultto({})
  end

  newparam(:options) do
    desc 'configuration_options: create, types_filter, titles_filter, types_create_exception, titles_create_exception.'
    defaultto({})
  end

  newparam(:defaults) do
    desc 'Parameters for every updated or created resource of a type: <type> => <parameter> => value ' \
         '(<parameter> => value when the title names a type).'
    defaultto({})
  end

  newparam(:create) do
    desc 'Overrides options["create"]: whether resources the catalog lacks are created.'
  end

  %w[types_filter titles_filter types_create_exception titles_create_exception].each do |list|
    newparam(list.to_sym, array_matching: :all) do
      desc "Overrides options[\"#{list}\"]."
    end
  end

  validate do
    data = rules
    data.types.each do |type|
      klass = Puppet::Type.type(type)
      unless klass
        where = environment_name
        raise Puppet::Error, "the type '#{type}' (#{data.configuration.key?(type) ? 'configuration' : 'defaults'}.#{type}) " \
                             "is not found in the modulepath#{where}#{form_hint}"
      end
      unknown_parameters(data, type, klass)
    end
  end

  # The type this instance's title names (the per-type form), or nil (the
  # nested form). Exactly a type's name: `Package` is not `package`.
  def named_type
    title = self[:name].to_s
    klass = Puppet::Type.type(title) if title.match?(/\A[a-z][a-z0-9_]*\z/)
    title if klass && klass.name.to_s == title
  end

  # The rules over this instance's data.
  def rules
    overrides = {}
    %i[create types_filter titles_filter types_create_exception titles_create_exception].each do |name|
      overrides[name.to_s] = self[name] unless self[name].nil?
    end
    PuppetX::Hierad::Override.new(self[:configuration], self[:options], self[:defaults], overrides, type: named_type)
  rescue PuppetX::Hierad::OverrideError => e
    raise Puppet::Error, e.message + (e.message.start_with?('configuration_options') ? '' : form_hint)
  end

  # Which form the data was read in, for a refusal of its shape: a title
  # that was meant to name a type but names none (a typo, a module missing)
  # reads the data in the other form, and the error alone would not say so.
  def form_hint
    type = named_type
    if type
      " (the title '#{type}' names a type, so configuration is <title> => <parameters> " \
        "and defaults <parameter> => value, both of type '#{type}')"
    elsif self[:name].to_s.match?(/\A[a-z][a-z0-9_]*\z/)
      " (the title '#{self[:name]}' names no type in the modulepath, so configuration is " \
        '<type> => <title> => <parameters> and defaults <type> => <parameter> => value)'
    else
      ''
    end
  end

  def environment_name
    env = Puppet.lookup(:current_environment) { nil }
    env ? " of environment #{env.name}" : ''
  end

  def unknown_parameters(data, type, klass)
    given = data.defaults.fetch(type, {}).keys.map { |p| [data.where('defaults', type), p] }
    data.configuration.fetch(type, {}).each do |title, parameters|
      next unless data.processed?(type, title)

      given += parameters.keys.map { |p| [data.where('configuration', type, title), p] }
    end
    given.each do |where, parameter|
      next if klass.valid_parameter?(parameter.to_sym)

      raise Puppet::Error, "#{where}.#{parameter}: the type '#{type}' has no parameter '#{parameter}'" \
                           "#{named_type ? form_hint : ''}"
    end
  end

  # Updates the resources of the catalog and returns the ones to create.
  # An error is kept for pre_run_check, which fails the run before any
  # resource is applied (Puppet only logs what `generate` raises).
  def generate
    data = rules
    data.entries.each_with_object([]) do |entry, created|
      existing = catalog.resource(entry.type, entry.title)
      if existing
        debug "#{existing.ref}: setting #{entry.parameters.keys.sort.join(', ')}"
        entry.parameters.each { |parameter, value| existing[parameter] = value }
      elsif data.create?(entry.type, entry.title)
        debug "#{entry.type}[#{entry.title}]: not in the catalog, creating it"
        created << Puppet::Type.type(entry.type).new(entry.parameters.merge(title: entry.title))
      else
        debug "#{entry.type}[#{entry.title}]: not in the catalog and not to be created, skipped"
      end
    end
  rescue StandardError => e
    @failure = e
    raise
  end

  def pre_run_check
    raise Puppet::Error, "override_resources[#{self[:name]}]: #{@failure.message}" if @failure
  end
end
